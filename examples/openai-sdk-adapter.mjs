// A custom model adapter (provider kind 'module') that wraps the official `openai` client, the way any
// client library can be brought to brood. brood imports this file inside every worker thread that runs
// an agent on this provider and calls createAdapter(config) there; request() then runs per model call.
//
// Register it (in the host):
//   import { createBrood, moduleAdapter } from 'brood';
//   const brood = createBrood({ models: [moduleAdapter({
//     id: 'openai-sdk', models: ['gpt-4o-mini'], acceptsUnlistedModels: true,
//     options: { baseURL: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
//     moduleUrl: new URL('./openai-sdk-adapter.mjs', import.meta.url) })] });
//
// Needs `npm install openai` in the host project. `options` must be plain data (it is structured-cloned
// into the workers); read secrets from the environment here, in the worker.

import { BroodError } from 'brood';
import OpenAI from 'openai';

export function createAdapter(config) {
  const { baseURL, apiKeyEnv, maxRetries = 2 } = config.options;
  const client = new OpenAI({ baseURL, apiKey: (apiKeyEnv && process.env[apiKeyEnv]) || 'no-key', maxRetries });
  return { request: (request) => complete(client, request) };
}

/** ModelRequest → one streamed Chat Completion → ModelResponse. Never rejects except ABORTED (the adapter contract). */
async function complete(client, request) {
  const state = { text: '', calls: new Map(), finishReason: undefined, usage: { inputTokens: 0, outputTokens: 0 } };
  try {
    const stream = await client.chat.completions.create(body(request), { signal: request.signal });
    for await (const chunk of stream) fold(state, chunk, request.onTextDelta);
  } catch (error) {
    if (request.signal.aborted) throw aborted();
    // The SDK's APIError message starts with the status ("400 model xyz does not exist").
    return { text: state.text, toolCalls: [], finish: 'error', usage: state.usage, diagnostic: error.message };
  }
  // The SDK ends the iteration quietly when the signal aborts; brood needs the rejection.
  if (request.signal.aborted) throw aborted();
  if (state.finishReason === undefined) {
    return {
      text: state.text,
      toolCalls: [],
      finish: 'error',
      usage: state.usage,
      diagnostic: 'stream ended before a finish_reason',
    };
  }
  const toolCalls = [...state.calls.values()].map((c) => ({ callId: c.id, name: c.name, arguments: c.arguments }));
  return {
    text: state.text,
    toolCalls,
    finish: finishOf(state.finishReason, toolCalls.length > 0),
    usage: state.usage,
  };
}

const aborted = () => new BroodError('ABORTED', 'model request aborted');

function body(request) {
  const messages = request.system === '' ? [] : [{ role: 'system', content: request.system }];
  for (const m of request.messages) {
    if (m.role === 'user') messages.push({ role: 'user', content: m.text });
    else if (m.role === 'tool') messages.push({ role: 'tool', tool_call_id: m.callId, content: m.content });
    else if (m.toolCalls.length === 0) messages.push({ role: 'assistant', content: m.text });
    else {
      const tool_calls = m.toolCalls.map((c) => ({
        id: c.callId,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
      messages.push({ role: 'assistant', content: m.text === '' ? null : m.text, tool_calls });
    }
  }
  const params = { model: request.route.model, messages, stream: true, stream_options: { include_usage: true } };
  if (request.tools.length > 0) {
    params.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  }
  if (request.route.reasoningEffort !== undefined) params.reasoning_effort = request.route.reasoningEffort;
  if (request.route.maxTokens !== undefined) params.max_completion_tokens = request.route.maxTokens;
  return params;
}

function fold(state, chunk, onTextDelta) {
  if (chunk.usage)
    state.usage = { inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0 };
  for (const choice of chunk.choices ?? []) {
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      state.text += delta.content;
      onTextDelta?.(delta.content);
    }
    for (const part of delta.tool_calls ?? []) {
      const call = state.calls.get(part.index) ?? { id: `call_${part.index}`, name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name = part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      state.calls.set(part.index, call);
    }
    if (choice.finish_reason) state.finishReason = choice.finish_reason;
  }
}

function finishOf(reason, hasToolCalls) {
  if (reason === 'length') return 'max-tokens';
  if (reason === 'content_filter') return 'refusal';
  return hasToolCalls || reason === 'tool_calls' ? 'tool-calls' : 'stop';
}
