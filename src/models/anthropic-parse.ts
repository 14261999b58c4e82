/**
 * Reading Messages API answers: the SSE event stream (`message_start`, `content_block_*`,
 * `message_delta`, `message_stop`, `ping`, `error`) and the plain JSON message fold into the same
 * per-block state, so both modes produce identical ModelResponses.
 */

import type { Usage } from '../types.js';
import { abortedError, throwIfAborted } from './abort.js';
import { cancellationOf } from './cancellation.js';
import { failure } from './failure.js';
import { describeCause, serverMessage } from './http.js';
import { sseEvents } from './sse.js';
import type { ModelFinish, ModelRequest, ModelResponse, ReasoningBlock, ToolCallRecord } from './types.js';

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; json: string; initial: unknown }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'other' };

interface MessageState {
  blocks: Map<number, Block>;
  stopReason: string | undefined;
  stopped: boolean;
  raw: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

type TextSink = ((delta: string) => void) | undefined;

const emptyState = (): MessageState => ({
  blocks: new Map(),
  stopReason: undefined,
  stopped: false,
  raw: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
});

/** Complete by protocol: `message_stop`, or a `message_delta` carrying `stop_reason`. Otherwise cut off: `error`. */
export async function readMessageStream(
  body: AsyncIterable<Uint8Array>,
  request: ModelRequest,
): Promise<ModelResponse> {
  const state = emptyState();
  try {
    for await (const event of sseEvents(body)) {
      const problem = applyEvent(state, event.data, request.onTextDelta);
      if (problem !== undefined) return failure(problem, partialOf(state));
      if (state.stopped) break;
    }
  } catch (error) {
    if (cancellationOf(request).aborted) throw abortedError();
    return failure(`stream failed: ${describeCause(error)}`, partialOf(state));
  }
  throwIfAborted(cancellationOf(request));
  if (!state.stopped && state.stopReason === undefined)
    return failure('malformed stream: ended before message_stop', partialOf(state));
  return finishResponse(state);
}

/** A non-streaming `message` (also accepted as the answer to a streaming request). */
export function readMessage(json: unknown, onTextDelta: TextSink): ModelResponse {
  if (typeof json !== 'object' || json === null) return failure('malformed response: body is not a JSON object');
  const message = json as {
    type?: unknown;
    error?: unknown;
    content?: unknown;
    stop_reason?: unknown;
    usage?: unknown;
  };
  if (message.type === 'error' || (message.error !== undefined && message.error !== null)) {
    return failure(`server error: ${serverMessage(JSON.stringify(message)) ?? 'unknown'}`);
  }
  if (!Array.isArray(message.content)) return failure('malformed response: message without a content array');
  const state = emptyState();
  message.content.forEach((block: unknown, index) => {
    openBlock(state, index, block, onTextDelta);
  });
  if (typeof message.stop_reason === 'string') state.stopReason = message.stop_reason;
  applyUsage(state, message.usage);
  return finishResponse(state);
}

function applyEvent(state: MessageState, data: string, onTextDelta: TextSink): string | undefined {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return `malformed stream: invalid JSON event ${JSON.stringify(data.slice(0, 80))}`;
  }
  if (typeof event !== 'object' || event === null) return 'malformed stream: event is not an object';
  switch (event.type) {
    case 'message_start':
      applyUsage(state, (event.message as { usage?: unknown } | undefined)?.usage);
      return undefined;
    case 'content_block_start':
      if (typeof event.index !== 'number') return 'malformed stream: content_block_start without an index';
      openBlock(state, event.index, event.content_block, onTextDelta);
      return undefined;
    case 'content_block_delta':
      return applyDelta(state, event.index, event.delta, onTextDelta);
    case 'message_delta': {
      const reason = (event.delta as { stop_reason?: unknown } | undefined)?.stop_reason;
      if (typeof reason === 'string') state.stopReason = reason;
      applyUsage(state, event.usage);
      return undefined;
    }
    case 'message_stop':
      state.stopped = true;
      return undefined;
    case 'error':
      return `server error in stream: ${serverMessage(JSON.stringify(event)) ?? 'unknown'}`;
    default:
      return undefined; // ping, content_block_stop, and event types added after this adapter was written
  }
}

/** A text block may start with text of its own (always, in a non-streamed message): it is a delta too. */
function openBlock(state: MessageState, index: number, raw: unknown, onTextDelta: TextSink): void {
  const block = startBlock(raw);
  state.blocks.set(index, block);
  if (block.type === 'text' && block.text !== '') onTextDelta?.(block.text);
}

function startBlock(raw: unknown): Block {
  const block = (raw ?? {}) as Record<string, unknown>;
  const str = (value: unknown): string => (typeof value === 'string' ? value : '');
  switch (block.type) {
    case 'text':
      return { type: 'text', text: str(block.text) };
    case 'tool_use':
      return { type: 'tool_use', id: str(block.id), name: str(block.name), json: '', initial: block.input };
    case 'thinking':
      return { type: 'thinking', thinking: str(block.thinking), signature: str(block.signature) };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: str(block.data) };
    default:
      return { type: 'other' };
  }
}

function applyDelta(state: MessageState, index: unknown, raw: unknown, onTextDelta: TextSink): string | undefined {
  const block = typeof index === 'number' ? state.blocks.get(index) : undefined;
  if (block === undefined) return `malformed stream: delta for unknown content block ${String(index)}`;
  const delta = (raw ?? {}) as Record<string, unknown>;
  if (delta.type === 'text_delta' && block.type === 'text' && typeof delta.text === 'string') {
    block.text += delta.text;
    if (delta.text !== '') onTextDelta?.(delta.text);
  } else if (delta.type === 'input_json_delta' && block.type === 'tool_use' && typeof delta.partial_json === 'string') {
    block.json += delta.partial_json;
  } else if (delta.type === 'thinking_delta' && block.type === 'thinking' && typeof delta.thinking === 'string') {
    block.thinking += delta.thinking;
  } else if (delta.type === 'signature_delta' && block.type === 'thinking' && typeof delta.signature === 'string') {
    block.signature += delta.signature;
  }
  return undefined;
}

/** Later usage reports replace earlier ones field by field (message_delta's counts are cumulative). */
function applyUsage(state: MessageState, raw: unknown): void {
  if (typeof raw !== 'object' || raw === null) return;
  const usage = raw as Record<string, unknown>;
  const take = (value: unknown, current: number): number =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : current;
  state.raw = {
    input: take(usage.input_tokens, state.raw.input),
    output: take(usage.output_tokens, state.raw.output),
    cacheRead: take(usage.cache_read_input_tokens, state.raw.cacheRead),
    cacheWrite: take(usage.cache_creation_input_tokens, state.raw.cacheWrite),
  };
}

/** Anthropic's input_tokens excludes cached tokens; Usage.inputTokens counts every prompt token. */
function usageOf(state: MessageState): Usage {
  const { input, output, cacheRead, cacheWrite } = state.raw;
  const usage: Usage = { inputTokens: input + cacheRead + cacheWrite, outputTokens: output };
  if (cacheRead > 0) usage.cacheReadTokens = cacheRead;
  if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite;
  return usage;
}

function textOf(state: MessageState): string {
  return ordered(state)
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('');
}

const ordered = (state: MessageState): Block[] =>
  [...state.blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);

function partialOf(state: MessageState): { text: string; usage: Usage } {
  return { text: textOf(state), usage: usageOf(state) };
}

function finishResponse(state: MessageState): ModelResponse {
  const blocks = ordered(state);
  const toolCalls: ToolCallRecord[] = [];
  const reasoning: ReasoningBlock[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_use') {
      if (block.name === '') return failure('malformed completion: tool_use block without a name', partialOf(state));
      toolCalls.push({
        callId: block.id === '' ? `toolu_${toolCalls.length}` : block.id,
        name: block.name,
        arguments: argumentsOf(block),
      });
    } else if (block.type === 'thinking') {
      reasoning.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    } else if (block.type === 'redacted_thinking') {
      reasoning.push({ type: 'redacted_thinking', data: block.data });
    }
  }
  const response: ModelResponse = {
    text: textOf(state),
    toolCalls,
    finish: mapStopReason(state.stopReason, toolCalls.length > 0),
    usage: usageOf(state),
  };
  if (reasoning.length > 0) response.reasoning = reasoning;
  return response;
}

/** Streamed input arrives as JSON fragments; a non-streamed (or delta-less) block carries `input` whole. */
function argumentsOf(block: Extract<Block, { type: 'tool_use' }>): string {
  if (block.json !== '') return block.json;
  const initial = block.initial;
  return typeof initial === 'object' && initial !== null ? JSON.stringify(initial) : '{}';
}

function mapStopReason(reason: string | undefined, hasToolCalls: boolean): ModelFinish {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max-tokens';
    case 'refusal':
      return 'refusal';
    case 'tool_use':
      return 'tool-calls';
    default:
      // end_turn, stop_sequence, pause_turn, or a server that leaves it out
      return hasToolCalls ? 'tool-calls' : 'stop';
  }
}
