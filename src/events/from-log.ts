/**
 * Host events derived from the facts an agent's session log records (DESIGN §8: one source of truth,
 * so host UIs, `inspect` and `trace` agree). Called with each batch the session writer stamps, only
 * while someone subscribes.
 */
import { knownEvent, parsedToolArguments } from '../sessions/event-types.js';
import type { LogMeta } from '../sessions/session-writer.js';
import type { BroodEvent, BroodEventBase, SessionEvent, Usage } from '../types.js';

export interface EventOrigin {
  readonly id: string;
  readonly parentId: string | undefined;
  readonly depth: number;
  /** The turn logged events without a turn number belong to (the latest claimed one). */
  readonly lastTurn: number;
}

const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };

export function baseOf(origin: Pick<EventOrigin, 'id' | 'parentId' | 'depth'>, time: number): BroodEventBase {
  return { agentId: origin.id, parentId: origin.parentId, depth: origin.depth, time };
}

export function fromLogged(
  origin: EventOrigin,
  logged: SessionEvent,
  meta: LogMeta | undefined,
): BroodEvent | undefined {
  const base = baseOf(origin, logged.time);
  const event = knownEvent(logged);
  switch (event?.type) {
    case 'user/message': {
      const { source, from, id } = event.data;
      if (source !== 'subagent-report' || from === undefined) return undefined;
      return { ...base, type: 'subagent-report', childId: from, messageId: id };
    }
    case 'turn/start':
      return { ...base, type: 'turn-start', turn: event.data.turn, messageIds: [...event.data.messageIds] };
    case 'assistant/message': {
      const { text, toolCalls, finish } = event.data;
      return {
        ...base,
        type: 'assistant-message',
        turn: origin.lastTurn,
        text,
        toolCalls: toolCalls.map((call) => ({ id: call.callId, name: call.name })),
        finish,
      };
    }
    case 'tool/call': {
      const { callId, name } = event.data;
      return {
        ...base,
        type: 'tool-start',
        turn: origin.lastTurn,
        callId,
        name,
        args: parsedToolArguments(event.data.arguments),
      };
    }
    case 'tool/result': {
      const { callId, name, isError, content } = event.data;
      return { ...base, type: 'tool-end', turn: origin.lastTurn, callId, name, isError, content };
    }
    case 'turn/end': {
      const end: BroodEvent = {
        ...base,
        type: 'turn-end',
        turn: event.data.turn,
        stopReason: event.data.reason,
        usage: { ...(meta?.usage ?? NO_USAGE) },
      };
      if (event.data.diagnostic !== undefined) end.diagnostic = event.data.diagnostic;
      return end;
    }
    default:
      return undefined;
  }
}
