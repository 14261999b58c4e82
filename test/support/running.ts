/** Whether a process is still there, for suites that check brood left no process behind. */
import { existsSync, readFileSync } from 'node:fs';

/** `PF_EXITING` in the flags of /proc/<pid>/stat: the kernel has begun to end the process. */
const PF_EXITING = 0x4;

/**
 * Still running: signal 0 reaches it, it is not a zombie, and it has not begun to exit. A grandchild
 * brood killed is reparented to init, which reaps it when it gets to it; until then signal 0 still
 * reaches the dead process. And the kernel closes a dying process's files (so its pipes report
 * closed, and brood's close resolves) before it marks it a zombie: on a loaded machine the process
 * can sit between the two for a while, so "began to exit" counts as gone (it never runs again).
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
    // Fields after the command's closing parenthesis: state ppid pgrp session tty_nr tpgid flags …
    const [state, , , , , , flags] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state !== 'Z' && state !== 'X' && (Number(flags) & PF_EXITING) === 0;
  } catch {
    return false; // gone between the two looks
  }
}

/**
 * A process with this pid exists: signal 0 reaches it (EPERM: it exists, owned by someone else).
 * Stricter than isRunning on purpose: a child of this process that exited stays a zombie until its
 * parent reaps it, so `processExists(child) === false` also says brood waited for the child's exit —
 * which isRunning, counting a zombie or an exiting process as gone, would not check.
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
