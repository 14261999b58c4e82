/**
 * Child processes brood owns and must be able to end: MCP stdio servers and ACP agents. Each starts
 * in a process group of its own (POSIX), and is ended as a group: a server behind a wrapper (`sh -c`,
 * an npx-style launcher) is a grandchild that signalling the wrapper alone would orphan, still
 * holding the pipes, so the close waiting for them would never end.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';

/** Windows has no process groups to signal; there the direct child is all brood can end. */
const GROUPS = process.platform !== 'win32';

export type OwnedSpawnOptions = Pick<SpawnOptions, 'cwd' | 'env'>;

/** Spawns `command` with piped stdio as the leader of a new process group. */
export function spawnOwned(command: string, args: readonly string[], options: OwnedSpawnOptions): ChildProcess {
  return spawn(command, args, {
    ...options,
    stdio: ['pipe', 'pipe', 'pipe'],
    // A new session and process group (setsid): the group id is the child's pid.
    detached: GROUPS,
    windowsHide: true,
  });
}

/**
 * Sends `signal` to every process of the child's group (the child and what it started). Callers
 * signal only while something of it may be left: the child unreaped, or its pipes still open.
 */
export function signalOwned(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  if (GROUPS) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: nothing of the group is left.
    }
    return;
  }
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}
