/**
 * Rebuilds what a resumed agent needs from its session events: the model history, the turn counter,
 * the accepted messages no turn claimed (its inbox), the route last used, and a turn a crash left open.
 */
import { reasoningField } from '../models/reasoning.js';
import type { ChatMessage, ToolCallRecord } from '../models/types.js';
import type { ModelRoute, SessionEvent } from '../types.js';

export interface AcceptedMessage {
  id: string;
  text: string;
  source: string;
}

export interface RebuiltSession {
  history: ChatMessage[];
  lastTurn: number;
  unclaimed: AcceptedMessage[];
  openTurn: number | undefined;
  lastRoute: ModelRoute | undefined;
  descriptor: Record<string, unknown> | undefined;
  modelSelectionEnabled: boolean;
}

export function rebuildSession(events: SessionEvent[]): RebuiltSession {
  const accepted = new Map<string, AcceptedMessage>();
  const claimed = new Set<string>();
  const result: RebuiltSession = {
    history: [],
    lastTurn: 0,
    unclaimed: [],
    openTurn: undefined,
    lastRoute: undefined,
    descriptor: undefined,
    modelSelectionEnabled: false,
  };
  let unanswered: ToolCallRecord[] = [];
  for (const event of events) {
    const data = event.data;
    switch (event.type) {
      case 'user/message':
        accepted.set(String(data.id), { id: String(data.id), text: String(data.text), source: String(data.source) });
        break;
      case 'turn/start': {
        const ids = Array.isArray(data.messageIds) ? data.messageIds.map(String) : [];
        for (const id of ids) {
          claimed.add(id);
          const message = accepted.get(id);
          if (message) result.history.push({ role: 'user', text: message.text });
        }
        result.lastTurn = Number(data.turn);
        result.openTurn = Number(data.turn);
        break;
      }
      case 'turn/end':
        result.history.push(...closeUnanswered(unanswered));
        unanswered = [];
        result.openTurn = undefined;
        break;
      case 'model/request':
        result.lastRoute = routeOfRequest(data);
        break;
      case 'assistant/message': {
        const toolCalls = (Array.isArray(data.toolCalls) ? data.toolCalls : []) as ToolCallRecord[];
        result.history.push({ role: 'assistant', text: String(data.text ?? ''), toolCalls, ...reasoningField(data) });
        unanswered = [...toolCalls];
        break;
      }
      case 'tool/result':
        result.history.push({
          role: 'tool',
          callId: String(data.callId),
          name: String(data.name),
          content: String(data.content),
          isError: data.isError === true,
        });
        unanswered = unanswered.filter((call) => call.callId !== data.callId);
        break;
      case 'agent/descriptor':
      case 'subagent/descriptor':
        result.descriptor = data;
        break;
      case 'subagent/model-selection-enabled':
        result.modelSelectionEnabled = true;
        break;
      default:
        break;
    }
  }
  if (result.openTurn !== undefined) result.history.push(...closeUnanswered(unanswered));
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

export function routeOfRequest(data: Record<string, unknown>): ModelRoute {
  const route: ModelRoute = { provider: String(data.provider), model: String(data.model) };
  if (typeof data.reasoningEffort === 'string') route.reasoningEffort = data.reasoningEffort;
  if (typeof data.maxTokens === 'number') route.maxTokens = data.maxTokens;
  return route;
}
