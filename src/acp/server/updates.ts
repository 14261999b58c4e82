/**
 * A prompt turn's host events as ACP `session/update` notifications. The session's own agent streams
 * `agent_message_chunk` (its text deltas; a message that arrived without deltas is sent whole) and
 * its tool calls as `tool_call` / `tool_call_update`. Every subagent below it appears as a tool call of
 * its own (`<childId>`, updated with the child's messages and closed with its stop reason), and the
 * child's own tool calls appear as tool calls too (ACP has no nesting; titles say whose they are).
 */
import type * as Acp from '@agentclientprotocol/sdk';
import type { BroodEvent, StopReason } from '../../types.js';
import { toolCallId } from './replay.js';

export class UpdateMapper {
  /** Text deltas already sent for the current assistant message of each agent. */
  private readonly streamed = new Set<string>();
  private readonly labels = new Map<string, string>();

  constructor(private readonly rootId: string) {}

  /** The updates one event produces (often none). */
  map(event: BroodEvent): Acp.SessionUpdate[] {
    const own = event.agentId === this.rootId;
    switch (event.type) {
      case 'text-delta':
        if (!own) return [];
        this.streamed.add(event.agentId);
        return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.delta } }];
      case 'assistant-message': {
        const wasStreamed = this.streamed.delete(event.agentId);
        if (own)
          return wasStreamed || event.text === ''
            ? []
            : [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.text } }];
        return event.text === ''
          ? []
          : [{ sessionUpdate: 'tool_call_update', toolCallId: event.agentId, content: [text(event.text)] }];
      }
      case 'tool-start':
        return [
          {
            sessionUpdate: 'tool_call',
            toolCallId: toolCallId(event.agentId, event.callId),
            title: own ? event.name : `${this.label(event.agentId)}: ${event.name}`,
            kind: 'other',
            status: 'in_progress',
            rawInput: event.args,
          },
        ];
      case 'tool-end':
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: toolCallId(event.agentId, event.callId),
            status: event.isError ? 'failed' : 'completed',
            content: [text(event.content)],
          },
        ];
      case 'subagent-start':
        this.labels.set(event.childId, `subagent ${event.childId}`);
        return [
          {
            sessionUpdate: 'tool_call',
            toolCallId: event.childId,
            title: `subagent ${event.childId} (${event.provider}, ${event.mode})`,
            kind: 'think',
            status: 'in_progress',
            rawInput: { childId: event.childId, provider: event.provider, mode: event.mode },
          },
        ];
      case 'subagent-end':
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: event.childId,
            status: event.stopReason === 'completed' ? 'completed' : 'failed',
            rawOutput: { stopReason: event.stopReason, usage: event.usage },
          },
        ];
      default:
        return [];
    }
  }

  private label(agentId: string): string {
    return this.labels.get(agentId) ?? `agent ${agentId}`;
  }
}

function text(value: string): Acp.ToolCallContent {
  return { type: 'content', content: { type: 'text', text: value } };
}

/** brood's stop reasons as ACP's (an `error` is a JSON-RPC error instead, see the server). */
export const ACP_STOP_REASONS: Record<Exclude<StopReason, 'error'>, Acp.StopReason> = {
  completed: 'end_turn',
  'max-tokens': 'max_tokens',
  'max-steps': 'max_turn_requests',
  refusal: 'refusal',
  aborted: 'cancelled',
  // ACP has no budget reason: a spent budget is the nearest of its limits.
  budget: 'max_turn_requests',
};
