/**
 * One prompt turn of an ACP child, recorded as brood session events from what the agent reports:
 * streamed text becomes `assistant/message` events (a message closes where a tool call starts, so the
 * history reads like a model's: text, calls, results, more text), tool calls become `tool/call` and
 * `tool/result`, thoughts and plans get their own `acp/*` events. Brood cannot see inside the agent;
 * this is its transcript as reported, no more.
 */
import type * as Acp from '@agentclientprotocol/sdk';
import type { ModelFinish } from '../../models/types.js';
import type { DriverEmittedEvent, NewEventOf } from '../../sessions/event-types.js';
import type { Usage } from '../../types.js';

const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };

interface OpenCall {
  name: string;
}

export class TurnTranscript {
  /** The last non-empty assistant text (the turn's output, as for a model-driven turn). */
  output = '';
  private text = '';
  private thought = '';
  private readonly open = new Map<string, OpenCall>();
  private readonly known = new Set<string>();
  private finished = false;

  constructor(private readonly emit: (events: DriverEmittedEvent[]) => void) {}

  /** Text the agent streamed in this turn (for hosts that show deltas). */
  onText: ((delta: string) => void) | undefined;

  update(update: Acp.SessionUpdate): void {
    if (this.finished) return;
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        this.flushThought();
        this.addText(blockText(update.content));
        break;
      case 'agent_thought_chunk':
        this.thought += blockText(update.content);
        break;
      case 'tool_call':
        this.startCall(update.toolCallId, update.name ?? update.title, update.rawInput, update.kind, update.title);
        this.maybeEndCall(update.toolCallId, update.status, update.content, update.rawOutput);
        break;
      case 'tool_call_update':
        if (!this.known.has(update.toolCallId))
          this.startCall(
            update.toolCallId,
            update.name ?? update.title ?? 'tool',
            update.rawInput,
            update.kind,
            update.title,
          );
        this.maybeEndCall(update.toolCallId, update.status, update.content, update.rawOutput);
        break;
      case 'plan':
        this.flushThought();
        this.emit([
          {
            type: 'acp/plan',
            data: { entries: update.entries.map(({ content, priority, status }) => ({ content, priority, status })) },
          },
        ]);
        break;
      default:
        // user_message_chunk echoes, mode/command/usage-window updates: not part of the transcript.
        break;
    }
  }

  /** A decision or fs call made for this session while the turn runs. */
  note(event: NewEventOf<'acp/permission'> | NewEventOf<'acp/fs'>): void {
    if (!this.finished) this.emit([event]);
  }

  /** Closes the turn: calls left open get an errored result (the history stays well-formed), then the final message. */
  finish(finish: ModelFinish, usage: Usage = NO_USAGE): void {
    if (this.finished) return;
    this.flushThought();
    const events: DriverEmittedEvent[] = [];
    for (const [callId, call] of this.open) {
      events.push({
        type: 'tool/result',
        data: {
          callId,
          name: call.name,
          isError: true,
          content: 'Error: the agent reported no outcome for this tool call',
        },
      });
    }
    this.open.clear();
    events.push(assistant(this.text, [], usage, finish));
    if (this.text.trim() !== '') this.output = this.text;
    this.text = '';
    this.finished = true;
    this.emit(events);
  }

  private addText(delta: string): void {
    if (delta === '') return;
    this.text += delta;
    this.onText?.(delta);
  }

  private startCall(
    callId: string,
    name: string,
    rawInput: unknown,
    kind: string | null | undefined,
    title: string | null | undefined,
  ): void {
    if (this.known.has(callId)) return;
    this.known.add(callId);
    this.flushThought();
    const args = rawInput === undefined ? '{}' : json(rawInput);
    const call = { callId, name: name || 'tool', arguments: args };
    // The text streamed so far is the message that asked for this call.
    if (this.text.trim() !== '') this.output = this.text;
    const events: DriverEmittedEvent[] = [assistant(this.text, [call], NO_USAGE, 'tool-calls')];
    this.text = '';
    events.push({ type: 'tool/call', data: { ...call, ...(kind ? { kind } : {}), ...(title ? { title } : {}) } });
    this.open.set(callId, { name: call.name });
    this.emit(events);
  }

  private maybeEndCall(
    callId: string,
    status: string | null | undefined,
    content: Acp.ToolCallContent[] | null | undefined,
    rawOutput: unknown,
  ): void {
    if (status !== 'completed' && status !== 'failed') return;
    const call = this.open.get(callId);
    if (!call) return; // already ended: a late duplicate update
    this.open.delete(callId);
    const text = contentText(content) || (rawOutput === undefined ? '' : json(rawOutput));
    this.emit([
      { type: 'tool/result', data: { callId, name: call.name, isError: status === 'failed', content: text } },
    ]);
  }

  private flushThought(): void {
    if (this.thought === '') return;
    this.emit([{ type: 'acp/thought', data: { text: this.thought } }]);
    this.thought = '';
  }
}

function assistant(
  text: string,
  toolCalls: { callId: string; name: string; arguments: string }[],
  usage: Usage,
  finish: ModelFinish,
): NewEventOf<'assistant/message'> {
  return { type: 'assistant/message', data: { text, toolCalls, usage, finish } };
}

export function blockText(block: Acp.ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'resource_link':
      return `[${block.name}](${block.uri})`;
    case 'resource':
      return 'text' in block.resource ? block.resource.text : `[resource ${block.resource.uri}]`;
    default:
      return `[${block.type}]`;
  }
}

function contentText(content: Acp.ToolCallContent[] | null | undefined): string {
  if (!content) return '';
  return content
    .map((item) => {
      if (item.type === 'content') return blockText(item.content);
      if (item.type === 'diff') return `diff ${item.path}`;
      return `terminal ${item.terminalId}`;
    })
    .filter((text) => text !== '')
    .join('\n');
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return String(value);
  }
}
