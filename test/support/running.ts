/** Whether a process is still running, for suites that check brood left no process behind. */
import { existsSync, readFileSync } from 'node:fs';

/**
 * Still running: signal 0 reaches it and it is not a zombie. A grandchild brood killed is reparented
 * to init, which reaps it when it gets to it; until then signal 0 still reaches the dead process.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  if (!existsSync('/proc/self/stat')) return true; // no procfs: signal 0 is all there is
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false; // gone between the two looks
  }
}
