/** Chat Completions bodies and an openAICompatible adapter against a loopback server, for the adapter's tests. */
import { loadAdapter, type OpenAICompatibleOptions, openAICompatible } from '../../../src/models/index.js';
import type { ModelAdapter } from '../../../src/models/types.js';
import type { Loopback } from './loopback.js';

export const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
  data: { choices: [{ index: 0, delta: d, finish_reason: finish }] },
});
export const usageChunk = (p: number, c: number, cached?: number) => ({
  data: {
    choices: [],
    usage: {
      prompt_tokens: p,
      completion_tokens: c,
      total_tokens: p + c,
      ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
    },
  },
});
export const DONE = '[DONE]';
export const completion = (message: Record<string, unknown>, finish: string, usage?: Record<string, unknown>) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  ...(usage === undefined ? {} : { usage }),
});

/** An openAICompatible adapter whose base URL is `server`'s. */
export function adapterOn(server: Loopback, extra: Partial<OpenAICompatibleOptions> = {}): Promise<ModelAdapter> {
  return loadAdapter(openAICompatible({ id: 'oa', baseURL: `${server.base}/v1/`, models: ['gpt'], ...extra }));
}
