/** The shape every session must keep, whatever happened to its agent (faults, cancels, recoveries). */
import { expect } from 'vitest';
import type { SessionEvent, SessionStore } from '../../src/index.js';
import { ofType } from './events.js';

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
  expect(ofType(events, 'turn/end')).toHaveLength(turns);
  const calls = ofType(events, 'tool/call').map((event) => String(event.data.callId));
  const results = ofType(events, 'tool/result').map((event) => String(event.data.callId));
  expect(new Set(calls).size).toBe(calls.length);
  expect([...results].sort()).toEqual([...calls].sort());
  return events;
}
