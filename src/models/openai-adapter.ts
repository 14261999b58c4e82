/** Chat Completions adapter: one POST per request (streaming or not), retried only before a completion (SPEC §8, issue 15). */
import { throwIfAborted } from './abort.js';
import { apiKeyOf, bodyKind, postWithRetries, readJson, type BodyKind } from './http.js';
import { readOpenAIOptions, type OpenAIAdapterOptions } from './openai.js';
import { failure } from './failure.js';
import { readChatCompletion, readChatStream } from './openai-parse.js';
import { effectiveOptions, type RequestOptions } from './request-options.js';
import type {
  ChatMessage,
  ModelAdapter,
  ModelInfo,
  ModelProviderConfig,
  ModelRequest,
  ModelResponse,
} from './types.js';
import { userAgent } from './version.js';

export function createOpenAIAdapter(config: ModelProviderConfig): ModelAdapter {
  const options = readOpenAIOptions(config);
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;
  const models = new Map(config.models.map((m) => [m.id, m]));
  return { request: (request) => runRequest(url, options, models.get(request.route.model), request) };
}

async function runRequest(
  url: string,
  options: OpenAIAdapterOptions,
  info: ModelInfo | undefined,
  request: ModelRequest,
): Promise<ModelResponse> {
  throwIfAborted(request.signal);
  const effective = effectiveOptions(options.request, options.perModel[request.route.model]);
  const stream = effective.stream ?? true;
  const outcome = await postWithRetries({
    url,
    headers: headersFor(options, effective, stream),
    body: JSON.stringify(buildChatBody({ options, effective, stream, info, request })),
    retry: options.retry,
    signal: request.signal,
  });
  if (!outcome.ok) return failure(outcome.diagnostic);
  return readAnswer(outcome.response, stream ? 'sse' : 'json', request);
}

async function readAnswer(response: Response, requested: BodyKind, request: ModelRequest): Promise<ModelResponse> {
  const kind = await bodyKind(response, requested, request.signal);
  if (typeof kind === 'object') return failure(kind.diagnostic);
  if (kind === 'sse') {
    if (response.body === null) return failure('malformed stream: empty response body');
    return readChatStream(response.body, request);
  }
  const read = await readJson(response, request.signal);
  throwIfAborted(request.signal);
  return read.ok ? readChatCompletion(read.json, request.onTextDelta) : failure(read.diagnostic);
}

/** Configured headers come last (lower-cased so they replace ours rather than being appended to them). */
export function headersFor(
  options: { apiKey?: string; apiKeyEnv?: string },
  effective: RequestOptions,
  stream: boolean,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    'user-agent': userAgent(),
  };
  const key = apiKeyOf(options);
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  for (const [name, value] of Object.entries(effective.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

interface BodyInput {
  options: OpenAIAdapterOptions;
  effective: RequestOptions;
  stream: boolean;
  info: ModelInfo | undefined;
  request: ModelRequest;
}

export function buildChatBody({ options, effective, stream, info, request }: BodyInput): Record<string, unknown> {
  const messages: unknown[] = request.system === '' ? [] : [{ role: 'system', content: request.system }];
  for (const message of request.messages) messages.push(wireMessage(message));
  const body: Record<string, unknown> = { model: request.route.model, messages };
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  } else {
    body.stream = false;
  }
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
    // Both are refused by OpenAI when no tools are offered, so they only travel with tools.
    if (effective.toolChoice !== undefined) body.tool_choice = wireToolChoice(effective.toolChoice);
    if (effective.parallelToolCalls !== undefined) body.parallel_tool_calls = effective.parallelToolCalls;
  }
  if (request.route.reasoningEffort !== undefined) body.reasoning_effort = request.route.reasoningEffort;
  const maxTokens = request.route.maxTokens ?? info?.maxTokens;
  if (maxTokens !== undefined) body[options.maxTokensField] = maxTokens;
  if (effective.temperature !== undefined) body.temperature = effective.temperature;
  if (effective.topP !== undefined) body.top_p = effective.topP;
  if (effective.seed !== undefined) body.seed = effective.seed;
  if (effective.stop !== undefined) body.stop = effective.stop;
  if (effective.responseFormat !== undefined) body.response_format = effective.responseFormat;
  return { ...body, ...effective.extraBody };
}

function wireToolChoice(choice: NonNullable<RequestOptions['toolChoice']>): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function wireMessage(message: ChatMessage): unknown {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.text };
    case 'tool':
      return { role: 'tool', tool_call_id: message.callId, content: message.content };
    case 'assistant': {
      if (message.toolCalls.length === 0) return { role: 'assistant', content: message.text };
      const toolCalls = message.toolCalls.map((c) => ({
        id: c.callId,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
      // OpenAI's own shape for a tool-calling turn without prose is `content: null`.
      return { role: 'assistant', content: message.text === '' ? null : message.text, tool_calls: toolCalls };
    }
  }
}
