/**
 * `session/load`: a brood session's history as ACP `session/update` notifications, in log order —
 * the user's messages, the agent's text, its tool calls with their outcomes. Notices brood delivers
 * to itself (job completions, child settlements) are part of the conversation and replayed too.
 */
import type * as Acp from '@agentclientprotocol/sdk';
import { knownEvent, messagesTaken, parsedToolArguments } from '../../sessions/event-types.js';
import type { SessionEvent } from '../../types.js';

export function replayUpdates(agentId: string, events: SessionEvent[]): Acp.SessionUpdate[] {
  const accepted = new Map<string, string>();
  const updates: Acp.SessionUpdate[] = [];
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'user/message') {
      accepted.set(event.data.id, event.data.text);
    } else if (event?.type === 'turn/start' || event?.type === 'turn/join') {
      for (const id of messagesTaken(event)) {
        const text = accepted.get(id);
        if (text !== undefined) updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text } });
      }
    } else if (event?.type === 'assistant/message') {
      const { text } = event.data;
      if (text !== '') updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
    } else if (event?.type === 'tool/call') {
      updates.push({
        sessionUpdate: 'tool_call',
        toolCallId: toolCallId(agentId, event.data.callId),
        title: event.data.name,
        kind: 'other',
        status: 'in_progress',
        rawInput: parsedToolArguments(event.data.arguments),
      });
    } else if (event?.type === 'tool/result') {
      updates.push({
        sessionUpdate: 'tool_call_update',
        toolCallId: toolCallId(agentId, event.data.callId),
        status: event.data.isError ? 'failed' : 'completed',
        content: [{ type: 'content', content: { type: 'text', text: event.data.content } }],
      });
    }
  }
  return updates;
}

/** Tool call ids are unique per agent session; prefixed with the agent so children's calls never collide. */
export function toolCallId(agentId: string, callId: string): string {
  return `${agentId}:${callId}`;
}
