/**
 * Reads an AI SDK stream (any of spec v2, v3, v4) into one brood ModelResponse: text deltas shown as
 * they come, reasoning kept with the message, tool calls with their JSON input text, usage and the
 * finish reason. An `error` part ends the request 'error' with the provider's message.
 */
import type { Usage } from '../../types.js';
import { abortedError } from '../abort.js';
import { failure } from '../failure.js';
import type { ModelFinish, ModelRequest, ModelResponse, ReasoningBlock, ToolCallRecord } from '../types.js';
import { callFailureOf, describeFailure, isAbortFailure } from './call-failure.js';

type Part = { type?: unknown } & Record<string, unknown>;

export interface StreamState {
  text: string;
  reasoning: string;
  toolCalls: ToolCallRecord[];
  usage: Usage;
  finish?: { finish: ModelFinish; raw: string };
  error?: string;
}

export function newStreamState(): StreamState {
  return { text: '', reasoning: '', toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 } };
}

/** Applies one stream part; returns false once the answer is over (an error part). */
export function applyPart(state: StreamState, part: Part, request: ModelRequest): boolean {
  switch (part.type) {
    case 'text-delta': {
      const delta = typeof part.delta === 'string' ? part.delta : '';
      if (delta === '') return true;
      state.text += delta;
      request.onTextDelta?.(delta);
      return true;
    }
    case 'reasoning-delta':
      if (typeof part.delta === 'string') state.reasoning += part.delta;
      return true;
    case 'tool-call':
      // A tool the provider ran itself (a web search) has its result in the stream already.
      if (part.providerExecuted !== true) state.toolCalls.push(toolCallOf(part));
      return true;
    case 'finish':
      state.usage = usageOf(part.usage);
      state.finish = finishOf(part.finishReason);
      return true;
    case 'error': {
      const cause = callFailureOf(part.error);
      if (isAbortFailure(cause) && request.signal.aborted) throw abortedError();
      state.error = `model stream error: ${describeFailure(cause)}`;
      return false;
    }
    default:
      return true;
  }
}

export function responseOf(state: StreamState, notes: readonly string[]): ModelResponse {
  const partial = { text: state.text, usage: state.usage };
  if (state.error !== undefined) return failure(state.error, partial);
  if (state.finish === undefined) return failure('malformed stream: it ended without a finish part', partial);
  const { finish, raw } = state.finish;
  if (finish === 'error') return failure(`the model finished with reason '${raw}'`, partial);
  const response: ModelResponse = { text: state.text, toolCalls: state.toolCalls, finish, usage: state.usage };
  if (state.reasoning !== '') response.reasoning = [reasoningBlock(state.reasoning)];
  if (notes.length > 0) response.diagnostic = notes.join('; ');
  return response;
}

/** The AI SDK's reasoning text, kept as brood's reasoning block (no signature: it is sent back as text). */
function reasoningBlock(text: string): ReasoningBlock {
  return { type: 'thinking', thinking: text, signature: '' };
}

function toolCallOf(part: Part): ToolCallRecord {
  const input = part.input;
  return {
    callId: String(part.toolCallId ?? ''),
    name: String(part.toolName ?? ''),
    arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}),
  };
}

const FINISHES: Record<string, ModelFinish> = {
  stop: 'stop',
  length: 'max-tokens',
  'tool-calls': 'tool-calls',
  'content-filter': 'refusal',
};

/** v2: the reason itself; v3/v4: `{ unified, raw }`. error, interrupted, other, unknown: an error turn. */
function finishOf(reason: unknown): { finish: ModelFinish; raw: string } {
  if (typeof reason === 'string') return { finish: FINISHES[reason] ?? 'error', raw: reason };
  const { unified, raw } = (reason ?? {}) as { unified?: unknown; raw?: unknown };
  const name = typeof unified === 'string' ? unified : 'unknown';
  const rawName = typeof raw === 'string' && raw !== '' ? raw : name;
  return { finish: FINISHES[name] ?? 'error', raw: rawName };
}

/** v3/v4 nested usage (`inputTokens.total`, ...) or v2 flat usage, as brood's Usage. */
export function usageOf(raw: unknown): Usage {
  const usage = (raw ?? {}) as Record<string, unknown>;
  const input = usage.inputTokens;
  const output = usage.outputTokens;
  if (typeof input === 'object' || typeof output === 'object') {
    const i = (input ?? {}) as Record<string, unknown>;
    const o = (output ?? {}) as Record<string, unknown>;
    return withOptional(
      { inputTokens: count(i.total), outputTokens: count(o.total) },
      { cacheReadTokens: i.cacheRead, cacheWriteTokens: i.cacheWrite, reasoningTokens: o.reasoning },
    );
  }
  return withOptional(
    { inputTokens: count(input), outputTokens: count(output) },
    { cacheReadTokens: usage.cachedInputTokens, reasoningTokens: usage.reasoningTokens },
  );
}

function withOptional(usage: Usage, optional: Partial<Record<keyof Usage, unknown>>): Usage {
  for (const [key, value] of Object.entries(optional))
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) usage[key as keyof Usage] = value;
  return usage;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}
