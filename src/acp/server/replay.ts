/**
 * `session/load`: a brood session's history as ACP `session/update` notifications, in log order —
 * the user's messages, the agent's text, its tool calls with their outcomes. Notices brood delivers
 * to itself (job completions, child settlements) are part of the conversation and replayed too.
 */
import type * as Acp from '@agentclientprotocol/sdk';
import type { SessionEvent } from '../../types.js';

export function replayUpdates(agentId: string, events: SessionEvent[]): Acp.SessionUpdate[] {
  const accepted = new Map<string, string>();
  const updates: Acp.SessionUpdate[] = [];
  for (const { type, data } of events) {
    if (type === 'user/message') {
      accepted.set(String(data.id), String(data.text ?? ''));
    } else if (type === 'turn/start') {
      for (const id of Array.isArray(data.messageIds) ? data.messageIds : []) {
        const text = accepted.get(String(id));
        if (text !== undefined) updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text } });
      }
    } else if (type === 'assistant/message') {
      const text = String(data.text ?? '');
      if (text !== '') updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
    } else if (type === 'tool/call') {
      updates.push({
        sessionUpdate: 'tool_call',
        toolCallId: toolCallId(agentId, data.callId),
        title: String(data.name),
        kind: 'other',
        status: 'in_progress',
        rawInput: parsed(data.arguments),
      });
    } else if (type === 'tool/result') {
      updates.push({
        sessionUpdate: 'tool_call_update',
        toolCallId: toolCallId(agentId, data.callId),
        status: data.isError === true ? 'failed' : 'completed',
        content: [{ type: 'content', content: { type: 'text', text: String(data.content ?? '') } }],
      });
    }
  }
  return updates;
}

/** Tool call ids are unique per agent session; prefixed with the agent so children's calls never collide. */
export function toolCallId(agentId: string, callId: unknown): string {
  return `${agentId}:${String(callId)}`;
}

export function parsed(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
