/** Reading what a runtime logged: a session's events, filtered by type or by turn. */
import type { Brood, SessionEvent } from '../../src/index.js';

export async function eventsOf(brood: Brood, id: string): Promise<SessionEvent[]> {
  return (await brood.sessions.read(id)).events;
}

export function ofType(events: SessionEvent[], type: string): SessionEvent[] {
  return events.filter((event) => event.type === type);
}

/** The events of one turn, from its `turn/start` to its `turn/end` (inclusive). */
export function turnEvents(events: SessionEvent[], turn: number): SessionEvent[] {
  const start = events.findIndex((e) => e.type === 'turn/start' && e.data.turn === turn);
  const end = events.findIndex((e) => e.type === 'turn/end' && e.data.turn === turn);
  if (start < 0 || end < 0) throw new Error(`turn ${turn} is not complete in the log`);
  return events.slice(start, end + 1);
}
