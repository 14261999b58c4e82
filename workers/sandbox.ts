// run_code sandbox thread entry (started by a driver's thread, see src/code-mode/sandbox-pool.ts).
import { runSandboxThread } from '../src/code-mode/sandbox-thread.js';

void runSandboxThread();
