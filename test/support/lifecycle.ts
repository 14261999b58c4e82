/** Subagent lifecycle recording, and a bound on a wait that must not hang a property run. */
import type { Brood } from '../../src/index.js';

export interface LifecycleStart {
  runId: string;
  provider: string;
  id: string;
  parentId: string;
  depth: number;
}
export interface LifecycleEnd {
  runId: string;
  provider: string;
  id: string;
  stopReason: string;
  output?: string;
}

/** Records subagent lifecycle events of a runtime. */
export function recordLifecycle(brood: Brood): { starts: LifecycleStart[]; ends: LifecycleEnd[] } {
  const starts: LifecycleStart[] = [];
  const ends: LifecycleEnd[] = [];
  brood.subagents.on('start', (info) => starts.push(info as LifecycleStart));
  brood.subagents.on('end', (info) => ends.push(info as LifecycleEnd));
  return { starts, ends };
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
