// run_code sandbox thread entry (started by a driver's thread, see src/driver/sandbox-pool.ts).
import { runSandboxThread } from '../src/driver/sandbox-thread.js';

void runSandboxThread();
