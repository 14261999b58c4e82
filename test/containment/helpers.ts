/**
 * Shared helpers for the Code Mode and containment suites: a session store that tells the test when an
 * event lands (tests synchronize on promises, never on sleeps), a well-formedness check for sessions,
 * and a per-agent execution counter for tool bodies.
 */
import { expect } from 'vitest';
import { memorySessions } from '../../src/index.js';
import type { SessionEvent, SessionStore } from '../../src/index.js';

export const route = { provider: 'scripted', model: 'scripted' } as const;

export interface TappedStore {
  store: SessionStore;
  /** Resolves with the first event of `id` (already appended or future) that has `type` and matches. */
  waitFor(id: string, type: string, match?: (event: SessionEvent) => boolean): Promise<SessionEvent>;
}

export function tapStore(inner: SessionStore = memorySessions()): TappedStore {
  const seen = new Map<string, SessionEvent[]>();
  const waiters = new Set<{ id: string; test: (event: SessionEvent) => boolean; resolve: (event: SessionEvent) => void }>();
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
          if (waiter.id !== id || !waiter.test(event)) continue;
          waiters.delete(waiter);
          waiter.resolve(event);
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
      const test = (event: SessionEvent): boolean => event.type === type && match(event);
      const found = logOf(id).find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.add({ id, test, resolve }));
    },
  };
}

/** Counts tool-body executions per `<agentId> <callId>` (exactly-once checks). */
export class ExecutionCounter {
  private readonly counts = new Map<string, number>();

  hit(agentId: string | undefined, callId: string): void {
    const key = `${agentId ?? '-'} ${callId}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** callId → count for one agent. */
  of(agentId: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, count] of this.counts) {
      const [agent, callId] = key.split(' ') as [string, string];
      if (agent === agentId) out[callId] = count;
    }
    return out;
  }
}

export function eventsOfType(events: SessionEvent[], type: string): SessionEvent[] {
  return events.filter((event) => event.type === type);
}

/**
 * A session is readable and well-formed: seq contiguous from 0, every turn/start closed by a turn/end
 * of the same turn before the next starts, and every tool/call answered by exactly one tool/result.
 */
export async function expectWellFormed(store: SessionStore, id: string): Promise<SessionEvent[]> {
  const { header, events } = await store.read(id);
  expect(header.id).toBe(id);
  expect(events.map((event) => event.seq)).toEqual(events.map((_event, index) => index));
  let open: unknown;
  let turns = 0;
  for (const event of events) {
    if (event.type === 'turn/start') {
      expect(open, `turn ${String(event.data.turn)} of ${id} started inside another turn`).toBeUndefined();
      open = event.data.turn;
      turns += 1;
    } else if (event.type === 'turn/end') {
      expect(event.data.turn).toBe(open);
      open = undefined;
    }
  }
  expect(open, `${id} has a turn/start without turn/end`).toBeUndefined();
  expect(eventsOfType(events, 'turn/end')).toHaveLength(turns);
  const calls = eventsOfType(events, 'tool/call').map((event) => String(event.data.callId));
  const results = eventsOfType(events, 'tool/result').map((event) => String(event.data.callId));
  expect(new Set(calls).size).toBe(calls.length);
  expect([...results].sort()).toEqual([...calls].sort());
  return events;
}
