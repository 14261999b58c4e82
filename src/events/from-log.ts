/**
 * Host events derived from the facts an agent's session log records (DESIGN §8: one source of truth,
 * so host UIs, `inspect` and `trace` agree). Called with each batch the session writer stamps, only
 * while someone subscribes.
 */
import type { ModelFinish, ToolCallRecord } from '../models/types.js';
import type { BroodEvent, BroodEventBase, SessionEvent, StopReason, Usage } from '../types.js';

export interface EventOrigin {
  readonly id: string;
  readonly parentId: string | undefined;
  readonly depth: number;
  /** The turn logged events without a turn number belong to (the latest claimed one). */
  readonly lastTurn: number;
}

/** What the log line does not carry but the event does (turn-end's rolled-up usage). */
export interface LogMeta {
  usage?: Usage;
}

const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };

export function baseOf(origin: Pick<EventOrigin, 'id' | 'parentId' | 'depth'>, time: number): BroodEventBase {
  return { agentId: origin.id, parentId: origin.parentId, depth: origin.depth, time };
}

export function fromLogged(
  origin: EventOrigin,
  event: SessionEvent,
  meta: LogMeta | undefined,
): BroodEvent | undefined {
  const { data } = event;
  const base = baseOf(origin, event.time);
  switch (event.type) {
    case 'turn/start':
      return {
        ...base,
        type: 'turn-start',
        turn: Number(data.turn),
        messageIds: Array.isArray(data.messageIds) ? data.messageIds.map(String) : [],
      };
    case 'assistant/message':
      return {
        ...base,
        type: 'assistant-message',
        turn: origin.lastTurn,
        text: String(data.text ?? ''),
        toolCalls: ((data.toolCalls ?? []) as ToolCallRecord[]).map((call) => ({ id: call.callId, name: call.name })),
        finish: String(data.finish) as ModelFinish,
      };
    case 'tool/call':
      return {
        ...base,
        type: 'tool-start',
        turn: origin.lastTurn,
        callId: String(data.callId),
        name: String(data.name),
        args: parsedArgs(data.arguments),
      };
    case 'tool/result':
      return {
        ...base,
        type: 'tool-end',
        turn: origin.lastTurn,
        callId: String(data.callId),
        name: String(data.name),
        isError: data.isError === true,
        content: String(data.content ?? ''),
      };
    case 'turn/end': {
      const end: BroodEvent = {
        ...base,
        type: 'turn-end',
        turn: Number(data.turn),
        stopReason: data.reason as StopReason,
        usage: { ...(meta?.usage ?? NO_USAGE) },
      };
      if (typeof data.diagnostic === 'string') end.diagnostic = data.diagnostic;
      return end;
    }
    default:
      return undefined;
  }
}

function parsedArgs(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
