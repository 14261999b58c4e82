/**
 * Reading Chat Completions answers: the SSE chunk stream and the plain JSON completion fold into the
 * same state, so both modes produce identical ModelResponses for the same completion.
 */

import type { Usage } from '../types.js';
import { abortedError, throwIfAborted } from './abort.js';
import { cancellationOf } from './cancellation.js';
import { failure } from './failure.js';
import { describeCause, serverMessage } from './http.js';
import { sseEvents } from './sse.js';
import type { ModelFinish, ModelRequest, ModelResponse, ToolCallRecord } from './types.js';

interface CompletionState {
  text: string;
  refusal: string;
  calls: Map<number, { id: string; name: string; arguments: string }>;
  finishReason: string | undefined;
  usage: Usage;
}

type TextSink = ((delta: string) => void) | undefined;

const emptyState = (): CompletionState => ({
  text: '',
  refusal: '',
  calls: new Map(),
  finishReason: undefined,
  usage: { inputTokens: 0, outputTokens: 0 },
});

/**
 * Completion is decided by protocol markers only: a choice's `finish_reason`, or the `[DONE]`
 * sentinel (the server's statement that the stream is complete). `[DONE]` without a finish_reason
 * keeps the text and reports `stop` (or `tool-calls` when calls were streamed). A stream that ends
 * with neither was cut off: `error`, keeping the text received so far.
 */
export async function readChatStream(body: AsyncIterable<Uint8Array>, request: ModelRequest): Promise<ModelResponse> {
  const state = emptyState();
  let sawDone = false;
  try {
    for await (const event of sseEvents(body)) {
      if (event.data.trim() === '[DONE]') {
        sawDone = true;
        break;
      }
      const problem = applyChunk(state, event.data, request.onTextDelta);
      if (problem !== undefined) return failure(problem, state);
    }
  } catch (error) {
    if (cancellationOf(request).aborted) throw abortedError();
    return failure(`stream failed: ${describeCause(error)}`, state);
  }
  throwIfAborted(cancellationOf(request));
  if (!sawDone && state.finishReason === undefined) return failure('malformed stream: ended before completion', state);
  return finishResponse(state);
}

/** A non-streaming completion (also accepted as the answer to a streaming request). */
export function readChatCompletion(json: unknown, onTextDelta: TextSink): ModelResponse {
  if (typeof json !== 'object' || json === null) return failure('malformed response: body is not a JSON object');
  const { choices, usage, error } = json as { choices?: unknown; usage?: unknown; error?: unknown };
  if (error !== undefined && error !== null)
    return failure(`server error: ${serverMessage(JSON.stringify({ error })) ?? 'unknown'}`);
  if (!Array.isArray(choices) || choices.length === 0)
    return failure('malformed response: no choices in the completion');
  const state = emptyState();
  state.usage = usageOf(usage) ?? state.usage;
  const choice = choices[0] as { message?: Message; finish_reason?: unknown };
  const message = choice?.message;
  if (typeof message !== 'object' || message === null) return failure('malformed response: choice without a message');
  // Same fold as a stream: the message is one big delta (tool calls carry their position as index).
  const delta: Delta = { content: message.content, refusal: message.refusal };
  if (Array.isArray(message.tool_calls))
    delta.tool_calls = message.tool_calls.map((call, index) => ({ ...call, index }));
  applyDelta(state, delta, onTextDelta);
  if (typeof choice.finish_reason === 'string') state.finishReason = choice.finish_reason;
  return finishResponse(state);
}

interface Message {
  content?: unknown;
  refusal?: unknown;
  tool_calls?: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
}

interface Delta {
  content?: unknown;
  refusal?: unknown;
  tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
}

/** Folds one chunk into the state; returns a diagnostic when the chunk is unusable. */
function applyChunk(state: CompletionState, data: string, onTextDelta: TextSink): string | undefined {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    return `malformed stream: invalid JSON chunk ${JSON.stringify(data.slice(0, 80))}`;
  }
  if (typeof chunk !== 'object' || chunk === null) return 'malformed stream: chunk is not an object';
  const { choices, usage, error } = chunk as { choices?: unknown; usage?: unknown; error?: unknown };
  if (error !== undefined && error !== null)
    return `server error in stream: ${serverMessage(JSON.stringify({ error })) ?? 'unknown'}`;
  state.usage = usageOf(usage) ?? state.usage;
  if (!Array.isArray(choices)) return undefined; // the usage-only final chunk has `choices: []` or none
  for (const choice of choices as { delta?: Delta; finish_reason?: unknown }[]) {
    if (choice?.delta !== undefined && choice.delta !== null) applyDelta(state, choice.delta, onTextDelta);
    if (typeof choice?.finish_reason === 'string') state.finishReason = choice.finish_reason;
  }
  return undefined;
}

function usageOf(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const {
    prompt_tokens: input,
    completion_tokens: output,
    prompt_tokens_details: details,
  } = raw as Record<string, unknown>;
  const usage: Usage = { inputTokens: count(input), outputTokens: count(output) };
  const cached = (details as { cached_tokens?: unknown } | null | undefined)?.cached_tokens;
  if (typeof cached === 'number' && cached > 0) usage.cacheReadTokens = cached;
  return usage;
}

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;

/** Tool calls arrive piecewise keyed by `index`: id and name first, then argument fragments. */
function applyDelta(state: CompletionState, delta: Delta, onTextDelta: TextSink): void {
  if (typeof delta.content === 'string' && delta.content !== '') {
    state.text += delta.content;
    onTextDelta?.(delta.content);
  }
  if (typeof delta.refusal === 'string') state.refusal += delta.refusal;
  if (!Array.isArray(delta.tool_calls)) return;
  delta.tool_calls.forEach((part, position) => {
    const index = typeof part?.index === 'number' ? part.index : position;
    const call = state.calls.get(index) ?? { id: '', name: '', arguments: '' };
    if (call.id === '' && typeof part?.id === 'string') call.id = part.id;
    if (call.name === '' && typeof part?.function?.name === 'string') call.name = part.function.name;
    if (typeof part?.function?.arguments === 'string') call.arguments += part.function.arguments;
    state.calls.set(index, call);
  });
}

function finishResponse(state: CompletionState): ModelResponse {
  const ordered = [...state.calls.entries()].sort(([a], [b]) => a - b);
  if (ordered.some(([, call]) => call.name === ''))
    return failure('malformed completion: tool call without a function name', state);
  const toolCalls: ToolCallRecord[] = ordered.map(([index, call]) => ({
    callId: call.id === '' ? `call_${index}` : call.id,
    name: call.name,
    arguments: call.arguments,
  }));
  // OpenAI reports a refusal in its own field with no content; it is the only text the user gets.
  if (state.refusal !== '' && state.text === '' && toolCalls.length === 0) {
    return { text: state.refusal, toolCalls, finish: 'refusal', usage: state.usage };
  }
  return {
    text: state.text,
    toolCalls,
    finish: mapFinish(state.finishReason, toolCalls.length > 0),
    usage: state.usage,
  };
}

function mapFinish(reason: string | undefined, hasToolCalls: boolean): ModelFinish {
  if (reason === 'length') return 'max-tokens';
  if (reason === 'content_filter') return 'refusal';
  if (reason === 'tool_calls' || reason === 'function_call' || hasToolCalls) return 'tool-calls';
  return 'stop';
}
