// Pool thread entry. Thin on purpose: the logic lives in src/ so it can be tested in-process too.
import { runDriverTask } from '../src/workers/driver-task.js';

export default (task: unknown) => runDriverTask(task);
