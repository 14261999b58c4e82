/**
 * Helpers for the reliability suite: a session store that tells the test when an event lands, a
 * per-agent+callId execution counter for tool bodies, lifecycle recording and small event queries.
 * Tests synchronize on promises (events), never on fixed sleeps.
 */
import type { Brood, SessionEvent } from '../../src/index.js';

export const route = { provider: 'scripted', model: 'scripted' } as const;

export { tapStore, type TappedStore } from './tap-store.js';
export { ExecutionCounter } from './execution-counter.js';

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

export function ofType(events: SessionEvent[], type: string): SessionEvent[] {
  return events.filter((event) => event.type === type);
}

export function firstUserText(events: SessionEvent[]): string {
  return String(ofType(events, 'user/message')[0]?.data.text ?? '');
}

/** Runs `fn` and returns what it threw (sync or async), or undefined. */
export async function caught(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
