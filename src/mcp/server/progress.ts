/**
 * One progress line per event of a served call's subtree worth telling a client about: turns that
 * start, tool calls, children starting and ending. Text deltas and the rest stay quiet.
 */
import type { BroodEvent } from '../../types.js';

export function progressText(event: BroodEvent): string | undefined {
  switch (event.type) {
    case 'turn-start':
      return event.depth === 0 ? undefined : `${event.agentId}: turn ${event.turn} started`;
    case 'tool-start':
      return `${event.agentId}: calls ${event.name}`;
    case 'subagent-start':
      return `${event.agentId}: started ${event.mode} child ${event.childId}`;
    case 'subagent-end':
      return `${event.agentId}: child ${event.childId} ended ${event.stopReason}`;
    default:
      return undefined;
  }
}
