/**
 * Rebuilds what a resumed agent needs from its session events: the model history, the turn counter,
 * the accepted messages no turn claimed (its inbox), the route last used, and a turn a crash left open.
 */
import { BroodError } from '../errors.js';
import { isMessageParts, type MessagePart, partsField } from '../models/content-parts.js';
import { reasoningField } from '../models/reasoning.js';
import type { ChatMessage, ToolCallRecord } from '../models/types.js';
import {
  type AgentDescriptorData,
  knownEvent,
  type MessageDelivery,
  messagesTaken,
  type SessionEventDataMap,
  type SubagentDescriptorData,
} from '../sessions/event-types.js';
import type { ModelRoute, SessionEvent } from '../types.js';
import { loggedHistory } from './given-history.js';

export interface AcceptedMessage {
  id: string;
  text: string;
  parts?: MessagePart[];
  source: string;
  delivery?: MessageDelivery;
  /** Its own budget and output schema, as recorded (unchecked: restore checks them). */
  budget?: unknown;
  outputSchema?: unknown;
}

export interface RebuiltSession {
  history: ChatMessage[];
  /** How many of `history`'s messages are the conversation the agent was created with (agent/history). */
  givenMessages: number;
  lastTurn: number;
  unclaimed: AcceptedMessage[];
  openTurn: number | undefined;
  lastRoute: ModelRoute | undefined;
  descriptor: AgentDescriptorData | SubagentDescriptorData | undefined;
  modelSelectionEnabled: boolean;
}

/**
 * `keepOpenTurn`: the calls a crash left unanswered in an open turn stay unanswered, for the resumed
 * driver to issue again (src/agents/open-turn.ts); otherwise each gets an `Error: interrupted` result.
 */
export function rebuildSession(events: SessionEvent[], options: { keepOpenTurn?: boolean } = {}): RebuiltSession {
  const accepted = new Map<string, AcceptedMessage>();
  const claimed = new Set<string>();
  const result: RebuiltSession = {
    history: [],
    givenMessages: 0,
    lastTurn: 0,
    unclaimed: [],
    openTurn: undefined,
    lastRoute: undefined,
    descriptor: undefined,
    modelSelectionEnabled: false,
  };
  let unanswered: ToolCallRecord[] = [];
  /** The messages a turn event took join the history where that event is, in its order. */
  const take = (event: SessionEvent): void => {
    for (const id of messagesTaken(event)) {
      claimed.add(id);
      const message = accepted.get(id);
      if (message) result.history.push({ role: 'user', text: message.text, ...partsField(message.parts) });
    }
  };
  for (const logged of events) {
    const event = knownEvent(logged);
    switch (event?.type) {
      case 'agent/history': {
        const given = loggedHistory(event.data.messages);
        result.history.push(...given);
        result.givenMessages += given.length;
        break;
      }
      case 'user/message': {
        const { id, text, source, delivery, budget, outputSchema } = event.data;
        const parts = loggedParts(event.data.parts, `message ${id}`);
        accepted.set(id, {
          id,
          text,
          ...partsField(parts),
          source,
          ...(delivery === undefined ? {} : { delivery }),
          ...(budget === undefined ? {} : { budget }),
          ...(outputSchema === undefined ? {} : { outputSchema }),
        });
        break;
      }
      case 'turn/start':
        take(event);
        result.lastTurn = event.data.turn;
        result.openTurn = event.data.turn;
        break;
      case 'turn/join':
        take(event);
        break;
      case 'turn/end':
        result.history.push(...closeUnanswered(unanswered));
        unanswered = [];
        result.openTurn = undefined;
        break;
      case 'model/request':
        result.lastRoute = routeOfRequest(event.data);
        break;
      case 'assistant/message': {
        const { text, toolCalls } = event.data;
        result.history.push({ role: 'assistant', text, toolCalls, ...reasoningField(event.data) });
        unanswered = [...toolCalls];
        break;
      }
      case 'tool/result': {
        const { callId, name, content, isError } = event.data;
        const parts = loggedParts(event.data.parts, `the result of call ${callId}`);
        result.history.push({ role: 'tool', callId, name, content, isError, ...partsField(parts) });
        unanswered = unanswered.filter((call) => call.callId !== callId);
        break;
      }
      case 'agent/descriptor':
      case 'subagent/descriptor':
        result.descriptor = event.data;
        break;
      case 'subagent/model-selection-enabled':
        result.modelSelectionEnabled = true;
        break;
      default:
        break;
    }
  }
  if (result.openTurn !== undefined && options.keepOpenTurn !== true)
    result.history.push(...closeUnanswered(unanswered));
  result.unclaimed = [...accepted.values()].filter((message) => !claimed.has(message.id));
  return result;
}

/** A tool call left without a result (crash, output cap) gets one, so the history stays well-formed for the model. */
function closeUnanswered(calls: ToolCallRecord[]): ChatMessage[] {
  return calls.map((call) => ({
    role: 'tool',
    callId: call.callId,
    name: call.name,
    content: 'Error: interrupted',
    isError: true,
  }));
}

export function routeOfRequest(data: SessionEventDataMap['model/request']): ModelRoute {
  const route: ModelRoute = { provider: data.provider, model: data.model };
  if (data.reasoningEffort !== undefined) route.reasoningEffort = data.reasoningEffort;
  if (data.maxTokens !== undefined) route.maxTokens = data.maxTokens;
  return route;
}

/** Content parts read back from a session file: checked like any input (a corrupt part is no part to send). */
function loggedParts(value: unknown, what: string): MessagePart[] | undefined {
  if (value === undefined) return undefined;
  if (!isMessageParts(value)) throw new BroodError('SESSION_CORRUPT', `the content parts of ${what} are malformed`);
  return value;
}
