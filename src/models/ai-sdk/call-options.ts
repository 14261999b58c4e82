/**
 * A brood model request as an AI SDK call's options (plain data: the proxied shape sends them to the
 * parent as they are; the abort signal is added where the call is made). The prompt, tool and usage
 * shapes are the same in specification versions v2, v3 and v4; only v4 has a `reasoning` option.
 */
import { isUrlData, type MessagePart } from '../content-parts.js';
import type { ChatMessage, ModelInfo, ModelRequest } from '../types.js';
import type { SpecVersion } from './language-model.js';

export interface CallPlan {
  options: Record<string, unknown>;
  /** What the call could not express (a reasoning effort before v4): said in the response's diagnostic. */
  notes: string[];
}

export function callOptionsFor(request: ModelRequest, info: ModelInfo | undefined, version: SpecVersion): CallPlan {
  const notes: string[] = [];
  const options: Record<string, unknown> = { prompt: promptOf(request.system, request.messages) };
  if (request.tools.length > 0) {
    options.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters,
    }));
  }
  const maxTokens = request.route.maxTokens ?? info?.maxTokens;
  if (maxTokens !== undefined) options.maxOutputTokens = maxTokens;
  const effort = request.route.reasoningEffort;
  if (effort !== undefined) {
    if (version === 'v4') options.reasoning = effort;
    else notes.push(`reasoning effort '${effort}' ignored: LanguageModel ${version} has no reasoning option`);
  }
  if (request.traceHeaders !== undefined) options.headers = { ...request.traceHeaders };
  return { options, notes };
}

type PromptMessage = { role: string; content: unknown };

/**
 * A tool result's media (an MCP tool's image) follows its assistant message's results as a user
 * message's file parts: tool outputs differ between specification versions, user file parts do not.
 */
function promptOf(system: string, messages: readonly ChatMessage[]): PromptMessage[] {
  const prompt: PromptMessage[] = system === '' ? [] : [{ role: 'system', content: system }];
  let toolMedia: MessagePart[] = [];
  for (const message of messages) {
    if (message.role !== 'tool' && toolMedia.length > 0) {
      prompt.push(userMessage([{ type: 'text', text: 'The media returned by the tool results above:' }, ...toolMedia]));
      toolMedia = [];
    }
    if (message.role !== 'tool') {
      prompt.push(
        message.role === 'user'
          ? userMessage(message.parts ?? [{ type: 'text', text: message.text }])
          : assistantMessage(message),
      );
      continue;
    }
    toolMedia.push(...(message.parts ?? []).filter((part) => part.type !== 'text'));
    const result = {
      type: 'tool-result',
      toolCallId: message.callId,
      toolName: message.name,
      output: { type: message.isError ? 'error-text' : 'text', value: message.content },
    };
    // One tool message holds every result of an assistant message, as the AI SDK builds it.
    const last = prompt.at(-1);
    if (last?.role === 'tool') (last.content as unknown[]).push(result);
    else prompt.push({ role: 'tool', content: [result] });
  }
  if (toolMedia.length > 0)
    prompt.push(userMessage([{ type: 'text', text: 'The media returned by the tool results above:' }, ...toolMedia]));
  return prompt;
}

/**
 * Images and files are both `file` parts in the AI SDK prompt. Data stays base64 text, and a URL its
 * string, so the options stay plain data (the proxied shape sends them to the parent): `withUrlObjects`
 * makes the URL objects the specification wants right before the model is called.
 */
function userMessage(parts: readonly MessagePart[]): PromptMessage {
  return {
    role: 'user',
    content: parts.map((part) =>
      part.type === 'text'
        ? { type: 'text', text: part.text }
        : {
            type: 'file',
            data: part.data,
            mediaType: part.mediaType,
            ...(part.type === 'file' && part.filename !== undefined ? { filename: part.filename } : {}),
          },
    ),
  };
}

/** Call options whose https: file data (a string while plain data) is a URL, as the specification reads a URL. */
export function withUrlObjects(options: Record<string, unknown>): Record<string, unknown> {
  const prompt = options.prompt;
  if (!Array.isArray(prompt)) return options;
  return {
    ...options,
    prompt: prompt.map((message: PromptMessage) =>
      message.role !== 'user' || !Array.isArray(message.content)
        ? message
        : { ...message, content: message.content.map(urlPart) },
    ),
  };
}

function urlPart(part: unknown): unknown {
  const file = part as { type?: unknown; data?: unknown };
  return file.type === 'file' && typeof file.data === 'string' && isUrlData(file.data)
    ? { ...file, data: new URL(file.data) }
    : part;
}

function assistantMessage(message: Extract<ChatMessage, { role: 'assistant' }>): PromptMessage {
  const content: unknown[] = [];
  for (const block of message.reasoning ?? [])
    if (block.type === 'thinking') content.push({ type: 'reasoning', text: block.thinking });
  if (message.text !== '') content.push({ type: 'text', text: message.text });
  for (const call of message.toolCalls)
    content.push({
      type: 'tool-call',
      toolCallId: call.callId,
      toolName: call.name,
      input: parsedInput(call.arguments),
    });
  return { role: 'assistant', content };
}

/** The prompt carries a tool call's input as a value; a malformed one the model sent goes back as its text. */
function parsedInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
