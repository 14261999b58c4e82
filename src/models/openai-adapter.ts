/** Chat Completions adapter: one streaming POST per request, retries for 429/5xx (SPEC §8). */
import { errorMessage } from '../errors.js';
import { abortedError, sleep, throwIfAborted } from './abort.js';
import { readOpenAIOptions, type OpenAIAdapterOptions } from './openai.js';
import { sseData } from './sse.js';
import type { ChatMessage, ModelAdapter, ModelFinish, ModelProviderConfig, ModelRequest, ModelResponse, ToolCallRecord } from './types.js';

const MAX_RETRIES = 2;
const BACKOFF_BASE_MS = 200;
const RETRY_AFTER_CAP_MS = 2000;

export function createOpenAIAdapter(config: ModelProviderConfig): ModelAdapter {
  const options = readOpenAIOptions(config);
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;
  return { request: (request) => runRequest(url, options, request) };
}

async function runRequest(url: string, options: OpenAIAdapterOptions, request: ModelRequest): Promise<ModelResponse> {
  throwIfAborted(request.signal);
  const init: RequestInit = {
    method: 'POST',
    headers: headersFor(options),
    body: JSON.stringify(buildBody(options, request)),
    signal: request.signal,
  };
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      if (request.signal.aborted) throw abortedError();
      return failure(`network error: ${describeCause(error)}`);
    }
    if (response.ok) return readStream(response, request);
    const retryable = response.status === 429 || response.status >= 500;
    if (retryable && attempt < MAX_RETRIES) {
      await response.body?.cancel().catch(() => {});
      await sleep(retryDelay(response, attempt), request.signal);
      continue;
    }
    const tries = attempt > 0 ? ` (after ${attempt + 1} attempts)` : '';
    return failure(`${await statusDiagnostic(response, request.signal)}${tries}`);
  }
}

function headersFor(options: OpenAIAdapterOptions): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  // Read the env at request time: the worker's environment is the one that counts.
  const key = options.apiKey ?? (options.apiKeyEnv === undefined ? undefined : process.env[options.apiKeyEnv]);
  if (key !== undefined && key !== '') headers.authorization = `Bearer ${key}`;
  return headers;
}

function buildBody(options: OpenAIAdapterOptions, request: ModelRequest): Record<string, unknown> {
  const messages: unknown[] = request.system === '' ? [] : [{ role: 'system', content: request.system }];
  for (const message of request.messages) messages.push(wireMessage(message));
  const body: Record<string, unknown> = {
    model: request.route.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
  }
  if (request.route.reasoningEffort !== undefined) body.reasoning_effort = request.route.reasoningEffort;
  if (request.route.maxTokens !== undefined) body[options.maxTokensField] = request.route.maxTokens;
  return body;
}

function wireMessage(message: ChatMessage): unknown {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.text };
    case 'tool':
      return { role: 'tool', tool_call_id: message.callId, content: message.content };
    case 'assistant': {
      if (message.toolCalls.length === 0) return { role: 'assistant', content: message.text };
      const toolCalls = message.toolCalls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      // OpenAI's own shape for a tool-calling turn without prose is `content: null`.
      return { role: 'assistant', content: message.text === '' ? null : message.text, tool_calls: toolCalls };
    }
  }
}

/** `retry-after` (seconds or HTTP date) wins, capped so a server cannot stall a turn; else 200, 400 ms. */
function retryDelay(response: Response, attempt: number): number {
  const header = response.headers.get('retry-after')?.trim();
  if (header !== undefined && header !== '') {
    const seconds = Number(header);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
    if (Number.isFinite(ms)) return Math.min(Math.max(ms, 0), RETRY_AFTER_CAP_MS);
  }
  return BACKOFF_BASE_MS * 2 ** attempt;
}

async function statusDiagnostic(response: Response, signal: AbortSignal): Promise<string> {
  const status = `HTTP ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`;
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw abortedError();
    return status;
  }
  const message = serverMessage(text);
  return message === undefined ? status : `${status}: ${message}`;
}

/** OpenAI-style `{error: {message}}` (or `{error: "..."}`, `{message}`); short plain bodies verbatim. */
function serverMessage(text: string): string | undefined {
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown } | null;
    const error = json?.error;
    if (typeof error === 'string') return error;
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
    if (typeof json?.message === 'string') return json.message;
  } catch {
    /* not JSON */
  }
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed.slice(0, 200);
}

function describeCause(error: unknown): string {
  // undici reports `TypeError: fetch failed` with the useful part (ECONNREFUSED, ...) in `cause`.
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause === undefined) return errorMessage(error);
  const code = (cause as { code?: unknown }).code;
  return `${errorMessage(error)} (${typeof code === 'string' ? `${code}: ` : ''}${errorMessage(cause)})`;
}

function failure(diagnostic: string, partial?: StreamState): ModelResponse {
  return {
    text: partial?.text ?? '',
    toolCalls: [],
    finish: 'error',
    usage: partial?.usage ?? { inputTokens: 0, outputTokens: 0 },
    diagnostic,
  };
}

interface StreamState {
  text: string;
  calls: Map<number, { id: string; name: string; arguments: string }>;
  finishReason: string | undefined;
  usage: { inputTokens: number; outputTokens: number };
}

async function readStream(response: Response, request: ModelRequest): Promise<ModelResponse> {
  const state: StreamState = { text: '', calls: new Map(), finishReason: undefined, usage: { inputTokens: 0, outputTokens: 0 } };
  if (response.body === null) return failure('malformed stream: empty response body');
  let sawDone = false;
  try {
    for await (const data of sseData(response.body)) {
      if (data.trim() === '[DONE]') {
        sawDone = true;
        break;
      }
      const problem = applyChunk(state, data, request.onTextDelta);
      if (problem !== undefined) return failure(problem, state);
    }
  } catch (error) {
    if (request.signal.aborted) throw abortedError();
    return failure(`stream failed: ${describeCause(error)}`, state);
  }
  throwIfAborted(request.signal);
  if (!sawDone && state.finishReason === undefined) return failure('malformed stream: ended before completion', state);
  return finishResponse(state);
}

/** Folds one chunk into the state; returns a diagnostic when the chunk is unusable. */
function applyChunk(state: StreamState, data: string, onTextDelta: ((delta: string) => void) | undefined): string | undefined {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    return `malformed stream: invalid JSON chunk ${JSON.stringify(data.slice(0, 80))}`;
  }
  if (typeof chunk !== 'object' || chunk === null) return 'malformed stream: chunk is not an object';
  const { choices, usage, error } = chunk as { choices?: unknown; usage?: unknown; error?: unknown };
  if (error !== undefined && error !== null) return `server error in stream: ${serverMessage(JSON.stringify({ error })) ?? 'unknown'}`;
  if (typeof usage === 'object' && usage !== null) {
    const { prompt_tokens: input, completion_tokens: output } = usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
    state.usage = { inputTokens: typeof input === 'number' ? input : 0, outputTokens: typeof output === 'number' ? output : 0 };
  }
  if (!Array.isArray(choices)) return undefined; // the usage-only final chunk has `choices: []` or none
  for (const choice of choices as { delta?: Delta; finish_reason?: unknown }[]) {
    if (choice?.delta !== undefined && choice.delta !== null) applyDelta(state, choice.delta, onTextDelta);
    if (typeof choice?.finish_reason === 'string') state.finishReason = choice.finish_reason;
  }
  return undefined;
}

interface Delta {
  content?: unknown;
  tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
}

/** Tool calls arrive piecewise keyed by `index`: id and name first, then argument fragments. */
function applyDelta(state: StreamState, delta: Delta, onTextDelta: ((delta: string) => void) | undefined): void {
  if (typeof delta.content === 'string' && delta.content !== '') {
    state.text += delta.content;
    onTextDelta?.(delta.content);
  }
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

function finishResponse(state: StreamState): ModelResponse {
  const ordered = [...state.calls.entries()].sort(([a], [b]) => a - b);
  if (ordered.some(([, call]) => call.name === '')) return failure('malformed stream: tool call without a function name', state);
  const toolCalls: ToolCallRecord[] = ordered.map(([index, call]) => ({
    callId: call.id === '' ? `call_${index}` : call.id,
    name: call.name,
    arguments: call.arguments,
  }));
  return { text: state.text, toolCalls, finish: mapFinish(state.finishReason, toolCalls.length > 0), usage: state.usage };
}

function mapFinish(reason: string | undefined, hasToolCalls: boolean): ModelFinish {
  if (reason === 'length') return 'max-tokens';
  if (reason === 'content_filter') return 'refusal';
  if (reason === 'tool_calls' || reason === 'function_call' || hasToolCalls) return 'tool-calls';
  return 'stop';
}
