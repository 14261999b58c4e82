/** Anthropic Messages adapter: `POST {baseURL}/v1/messages` through the shared HTTP loop. */

import { DEFAULTS } from '../defaults.js';
import { type AnthropicAdapterOptions, type AnthropicRequestOptions, anthropicOptionsOf } from './anthropic.js';
import { readMessage, readMessageStream } from './anthropic-parse.js';
import { toolResultContent, userBlocks } from './anthropic-parts.js';
import { type BodyInput as HttpBodyInput, httpAdapter } from './http-adapter.js';
import type { ChatMessage, ModelAdapter, ModelProviderConfig } from './types.js';

const MIN_THINKING_BUDGET = 1024;

export function createAnthropicAdapter(config: ModelProviderConfig): ModelAdapter {
  return httpAdapter(config, anthropicOptionsOf(config), {
    path: '/v1/messages',
    headers: (options, key) => ({
      'anthropic-version': options.anthropicVersion,
      ...(key === undefined ? {} : { 'x-api-key': key }),
    }),
    body: buildMessagesBody,
    readStream: readMessageStream,
    readJson: readMessage,
  });
}

type BodyInput = HttpBodyInput<AnthropicAdapterOptions, AnthropicRequestOptions>;

export function buildMessagesBody(input: BodyInput): { body: Record<string, unknown> } | { diagnostic: string } {
  const { effective, stream, info, request } = input;
  // `max_tokens` is mandatory in the Messages API: the route's, else the catalog model's, else the default.
  const maxTokens = request.route.maxTokens ?? info?.maxTokens ?? DEFAULTS.anthropicMaxTokens;
  const body: Record<string, unknown> = {
    model: request.route.model,
    max_tokens: maxTokens,
    messages: wireMessages(request.messages),
    stream,
  };
  if (request.system !== '') body.system = request.system;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
    const choice = wireToolChoice(effective.toolChoice, effective.parallelToolCalls);
    if (choice !== undefined) body.tool_choice = choice;
  }
  const thinking = thinkingFor(input, maxTokens);
  if (typeof thinking === 'string') return { diagnostic: thinking };
  if (thinking !== undefined) body.thinking = thinking;
  if (effective.temperature !== undefined) body.temperature = effective.temperature;
  if (effective.topP !== undefined) body.top_p = effective.topP;
  if (effective.stop !== undefined)
    body.stop_sequences = typeof effective.stop === 'string' ? [effective.stop] : effective.stop;
  if (effective.responseFormat !== undefined) body.output_config = { format: effective.responseFormat };
  return { body: { ...body, ...effective.extraBody } };
}

/**
 * Reasoning effort → extended thinking. The budget comes from the table, capped below max_tokens (the
 * API requires budget < max_tokens). Within a tool loop the API demands that the assistant message
 * being answered starts with its thinking block; when that block was not kept, thinking is left off
 * for this request rather than sending a request the API refuses. Returns a diagnostic when no valid
 * budget fits.
 */
function thinkingFor(
  { options, request }: BodyInput,
  maxTokens: number,
): { type: 'enabled'; budget_tokens: number } | string | undefined {
  const effort = request.route.reasoningEffort;
  if (effort === undefined || effort === 'none') return undefined;
  const table = options.thinkingBudgets[effort];
  if (table === undefined) {
    return `reasoning effort '${effort}' has no thinking budget (known: ${Object.keys(options.thinkingBudgets).join(', ')}, none)`;
  }
  const budget = Math.min(table, maxTokens - 1);
  if (budget < MIN_THINKING_BUDGET) {
    return `max_tokens ${maxTokens} leaves no room for extended thinking (reasoning effort '${effort}' needs max_tokens > ${MIN_THINKING_BUDGET})`;
  }
  if (answersToolCallsWithoutReasoning(request.messages)) return undefined;
  return { type: 'enabled', budget_tokens: budget };
}

function answersToolCallsWithoutReasoning(messages: ChatMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return false;
    if (message?.role === 'assistant') return message.toolCalls.length > 0 && (message.reasoning?.length ?? 0) === 0;
  }
  return false;
}

function wireToolChoice(
  choice: AnthropicRequestOptions['toolChoice'],
  parallel: boolean | undefined,
): Record<string, unknown> | undefined {
  const base: Record<string, unknown> | undefined =
    choice === undefined
      ? undefined
      : choice === 'auto'
        ? { type: 'auto' }
        : choice === 'required'
          ? { type: 'any' }
          : choice === 'none'
            ? { type: 'none' }
            : { type: 'tool', name: choice.name };
  if (parallel !== false || base?.type === 'none') return base;
  return { ...(base ?? { type: 'auto' }), disable_parallel_tool_use: true };
}

type Block = Record<string, unknown>;

/**
 * The Messages API wants alternating turns with non-empty content: tool results travel as
 * `tool_result` blocks of a user turn, consecutive same-role messages are merged, and an empty
 * assistant message (a failed request's placeholder) is left out.
 */
export function wireMessages(messages: ChatMessage[]): { role: 'user' | 'assistant'; content: Block[] }[] {
  const out: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') push('user', userBlocks(message.parts ?? [{ type: 'text', text: message.text }]));
    else if (message.role === 'tool') push('user', [toolResult(message)]);
    else push('assistant', assistantBlocks(message));
  }
  return out;
}

function toolResult(message: Extract<ChatMessage, { role: 'tool' }>): Block {
  const content = toolResultContent(message.content, message.parts);
  const block: Block = { type: 'tool_result', tool_use_id: message.callId, content };
  if (message.isError) block.is_error = true;
  return block;
}

function assistantBlocks(message: Extract<ChatMessage, { role: 'assistant' }>): Block[] {
  const blocks: Block[] = (message.reasoning ?? []).map((r) => ({ ...r }));
  if (message.text !== '') blocks.push({ type: 'text', text: message.text });
  for (const call of message.toolCalls)
    blocks.push({ type: 'tool_use', id: call.callId, name: call.name, input: toolInput(call.arguments) });
  // Reasoning alone is not a message the API accepts back.
  return blocks.length > 0 && blocks.every((b) => b.type === 'thinking' || b.type === 'redacted_thinking')
    ? []
    : blocks;
}

/** `input` must be an object; arguments the model sent as malformed JSON go back as `{}` (their tool result says why). */
function toolInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
