/** Chat Completions adapter: `POST {baseURL}/chat/completions` through the shared HTTP loop (SPEC §8). */
import { type BodyInput, httpAdapter } from './http-adapter.js';
import { type OpenAIAdapterOptions, openAIOptionsOf } from './openai.js';
import { readChatCompletion, readChatStream } from './openai-parse.js';
import type { RequestOptions } from './request-options.js';
import type { ChatMessage, ModelAdapter, ModelProviderConfig } from './types.js';

export function createOpenAIAdapter(config: ModelProviderConfig): ModelAdapter {
  return httpAdapter(config, openAIOptionsOf(config), {
    path: '/chat/completions',
    headers: (_options, key): Record<string, string> => (key === undefined ? {} : { authorization: `Bearer ${key}` }),
    body: (input) => ({ body: buildChatBody(input) }),
    readStream: readChatStream,
    readJson: readChatCompletion,
  });
}

export function buildChatBody({
  options,
  effective,
  stream,
  info,
  request,
}: BodyInput<OpenAIAdapterOptions, RequestOptions>): Record<string, unknown> {
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
