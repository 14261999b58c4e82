/**
 * Helpers for the reliability suite: a session store that tells the test when an event lands, a
 * per-agent+callId execution counter for tool bodies, lifecycle recording and small event queries.
 * Tests synchronize on promises (events), never on fixed sleeps.
 */
import { memorySessions } from '../../src/index.js';
import type { Brood, SessionEvent, SessionStore } from '../../src/index.js';

export const route = { provider: 'scripted', model: 'scripted' } as const;

export interface TappedStore {
  store: SessionStore;
  waitFor(id: string, type: string, match?: (event: SessionEvent) => boolean): Promise<SessionEvent>;
  /** Like waitFor, across every session; resolves with the session id. */
  waitForAny(type: string, match?: (event: SessionEvent) => boolean): Promise<string>;
}

export function tapStore(inner: SessionStore = memorySessions()): TappedStore {
  const seen = new Map<string, SessionEvent[]>();
  const waiters = new Set<{ id: string; test: (e: SessionEvent) => boolean; resolve: (e: SessionEvent, id: string) => void }>();
  const logOf = (id: string): SessionEvent[] => {
    let log = seen.get(id);
    if (!log) seen.set(id, (log = []));
    return log;
  };
  const store: SessionStore = {
    create: (header) => inner.create(header),
    async append(id, events) {
      await inner.append(id, events);
      for (const event of events) {
        logOf(id).push(event);
        for (const waiter of [...waiters]) {
          if ((waiter.id !== '*' && waiter.id !== id) || !waiter.test(event)) continue;
          waiters.delete(waiter);
          waiter.resolve(event, id);
        }
      }
    },
    flush: (id) => inner.flush(id),
    read: (id) => inner.read(id),
    list: () => inner.list(),
  };
  return {
    store,
    waitFor(id, type, match = () => true) {
      const test = (e: SessionEvent): boolean => e.type === type && match(e);
      const found = logOf(id).find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.add({ id, test, resolve: (event) => resolve(event) }));
    },
    waitForAny(type, match = () => true) {
      const test = (e: SessionEvent): boolean => e.type === type && match(e);
      for (const [id, log] of seen) if (log.some(test)) return Promise.resolve(id);
      return new Promise((resolve) => waiters.add({ id: '*', test, resolve: (_event, id) => resolve(id) }));
    },
  };
}

/** Counts tool-body executions per `<agentId> <callId>`. */
export class ExecutionCounter {
  readonly counts = new Map<string, number>();
  hit(agentId: string | undefined, callId: string): void {
    const key = `${agentId ?? '-'} ${callId}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  of(agentId: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, count] of this.counts) {
      const [agent, callId] = key.split(' ') as [string, string];
      if (agent === agentId) out[callId] = count;
    }
    return out;
  }
  max(): number {
    return Math.max(0, ...this.counts.values());
  }
}

export interface LifecycleStart { runId: string; provider: string; id: string; parentId: string; depth: number }
export interface LifecycleEnd { runId: string; provider: string; id: string; stopReason: string; output?: string }

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
