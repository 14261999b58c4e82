/**
 * A continuable child's settlement notice a crash kept from being written. Each busy period of a
 * continuable child ends with a notice to its parent, recorded with the child's id and the last turn
 * of that period (`user/message` `settles`); the crash may fall between the child's `turn/end` and
 * that write. Recovery finds the periods that ended with no such notice and delivers it once (the
 * notice it writes carries the marker, so a later recovery finds it).
 */
import { endedResultOf } from '../agents/recovered-turn.js';
import { knownEvent } from '../sessions/event-types.js';
import type { SessionEvent, TurnResult } from '../types.js';
import type { Session } from './recover-jobs.js';

export interface LostSettlement {
  parentId: string;
  childId: string;
  /** The last turn of the busy period the notice settles. */
  turn: number;
  last: TurnResult;
}

/**
 * The notice `child` (a continuable child with no work left) owes `parent`, if it was never written.
 * None for a period that ended `aborted` (an interrupt, or its runtime's close: then its parent was
 * being disposed and took no notice either), nor for a parent that never ran a turn (an MCP-served
 * call's parent takes no notices).
 */
export function lostSettlement(child: Session, parent: Session): LostSettlement | undefined {
  const turn = lastEndedTurn(child.events);
  if (turn === undefined) return undefined;
  const last = endedResultOf(child.events);
  if (last === undefined || last.stopReason === 'aborted') return undefined;
  if (!parent.events.some((event) => event.type === 'turn/start')) return undefined;
  if (noticed(parent.events, child.header.id, turn)) return undefined;
  return { parentId: parent.header.id, childId: child.header.id, turn, last };
}

function lastEndedTurn(events: readonly SessionEvent[]): number | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = knownEvent(events[index] as SessionEvent);
    if (event?.type === 'turn/end') return event.data.turn;
  }
  return undefined;
}

/**
 * Whether the parent's log holds the notice of the period ending at `turn`. A notice written before
 * notices carried their marker names the child only in its text: the log cannot tell which period it
 * settled, so any such notice counts (at most once, as before).
 */
function noticed(events: readonly SessionEvent[], childId: string, turn: number): boolean {
  return events.some((logged) => {
    const event = knownEvent(logged);
    if (event?.type !== 'user/message' || event.data.source !== 'subagent-settled') return false;
    // Read from the store: a hand-edited marker is not trusted to be well-formed.
    const settles: unknown = event.data.settles;
    const text: unknown = event.data.text;
    if (settles === undefined) return typeof text === 'string' && text.startsWith(`Background subagent ${childId} `);
    if (typeof settles !== 'object' || settles === null) return false;
    const marker = settles as { childId?: unknown; turn?: unknown };
    return marker.childId === childId && typeof marker.turn === 'number' && marker.turn >= turn;
  });
}
