/**
 * The events of one turn, cut out of a subscription to its agent's tree. The subscription is taken
 * before the message is accepted, so the turn's `turn-start` (the one that claims the message) cannot
 * be missed; from there the agent's own events and every descendant's pass until its `turn-end`.
 * Events of earlier turns, and of children still busy from them, are left out.
 */
import type { EventStream } from '../../events/stream.js';
import type { BroodEvent } from '../../types.js';

type Verdict = 'skip' | 'pass' | 'last';

export class TurnWindow {
  private turn: number | undefined;

  constructor(
    private readonly agentId: string,
    private readonly messageId: string,
  ) {}

  classify(event: BroodEvent): Verdict {
    const own = event.agentId === this.agentId;
    if (this.turn === undefined) {
      if (!own || event.type !== 'turn-start' || !event.messageIds.includes(this.messageId)) return 'skip';
      this.turn = event.turn;
      return 'pass';
    }
    if (!own) return 'pass';
    if ('turn' in event && event.turn !== this.turn) return 'skip';
    return event.type === 'turn-end' ? 'last' : 'pass';
  }
}

/**
 * Moves the turn's events from `source` (the hub subscription, read as fast as it fills) to `out`
 * (what the host reads, bounded like every event stream). Ends `out` after the turn's `turn-end`, or
 * when `source` ends without one (the message never ran: its run settled first).
 */
export async function pumpTurn(source: EventStream, window: TurnWindow, out: EventStream): Promise<void> {
  try {
    for await (const event of source) {
      const verdict = window.classify(event);
      if (verdict !== 'skip') out.push(event);
      if (verdict === 'last') break;
    }
  } finally {
    out.end();
  }
}
