/** Chat Completions adapter: `POST {baseURL}/chat/completions` through the shared HTTP loop (SPEC §8). */
import { isUrlData, type MessagePart, uncarriable } from './content-parts.js';
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
  messages.push(...wireMessages(request.messages));
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

/**
 * Tool messages take text only in Chat Completions: a tool result's media (an MCP tool's image) follows
 * its assistant message's results as a user message of its own, the first place the format allows.
 */
function wireMessages(history: readonly ChatMessage[]): unknown[] {
  const out: unknown[] = [];
  let toolMedia: MessagePart[] = [];
  for (const message of history) {
    if (message.role !== 'tool' && toolMedia.length > 0) {
      out.push(toolMediaMessage(toolMedia));
      toolMedia = [];
    }
    out.push(wireMessage(message));
    if (message.role === 'tool') toolMedia.push(...carriedMedia(message));
  }
  if (toolMedia.length > 0) out.push(toolMediaMessage(toolMedia));
  return out;
}

/** A tool result's media parts the format can carry (the others stay a placeholder in its text). */
function carriedMedia(message: Extract<ChatMessage, { role: 'tool' }>): MessagePart[] {
  return (message.parts ?? []).filter(
    (part) => part.type !== 'text' && uncarriable(part, 'chat-completions') === undefined,
  );
}

function toolMediaMessage(media: MessagePart[]): unknown {
  const intro: MessagePart = { type: 'text', text: 'The media returned by the tool results above:' };
  return { role: 'user', content: [intro, ...media].map(wirePart) };
}

/** A content part as Chat Completions takes it: images as `image_url` (a data: or https: URL), files as `file`. */
function wirePart(part: MessagePart): unknown {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const url = isUrlData(part.data) ? part.data : `data:${part.mediaType};base64,${part.data}`;
  if (part.type === 'image') return { type: 'image_url', image_url: { url } };
  return { type: 'file', file: { filename: part.filename ?? 'file', file_data: url } };
}

function wireMessage(message: ChatMessage): unknown {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.parts === undefined ? message.text : message.parts.map(wirePart) };
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
