/**
 * Shared helpers for the Code Mode and containment suites: a session store that tells the test when an
 * event lands (tests synchronize on promises, never on sleeps), a well-formedness check for sessions,
 * and a per-agent execution counter for tool bodies.
 */
import { expect } from 'vitest';
import type { SessionEvent, SessionStore } from '../../src/index.js';

export const route = { provider: 'scripted', model: 'scripted' } as const;

export { tapStore, type TappedStore } from './tap-store.js';
export { ExecutionCounter } from './execution-counter.js';

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
