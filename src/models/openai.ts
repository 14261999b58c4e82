/** OpenAI-compatible (Chat Completions) provider config factory (SPEC §8). */
import { z } from 'zod';
import { lazy } from '../util/lazy.js';
import type { HttpAdapterOptions } from './http-adapter.js';
import {
  type HttpProviderOptions,
  httpProtocolSchemas,
  httpProviderConfig,
  readAdapterOptions,
} from './http-provider.js';
import { type ModelEntry, optionSchemas, type RequestOptions, resolveRetry } from './request-options.js';
import type { ModelProviderConfig } from './types.js';
import { parseOptions } from './validate.js';

export interface OpenAICompatibleOptions extends RequestOptions, HttpProviderOptions {
  /** The `/v1` base, e.g. `https://api.openai.com/v1`; requests go to `{baseURL}/chat/completions`. */
  baseURL: string;
  /** Plain ids, or objects carrying efforts, an output cap and request-option overrides. */
  models: ModelEntry[];
  /** Default 'max_tokens'; OpenAI's reasoning models need 'max_completion_tokens'. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

/** What the adapter reads back out of `config.options` (after a structured clone into a worker). */
export interface OpenAIAdapterOptions extends HttpAdapterOptions {
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

const schemas = lazy(() => {
  const { requestOptionShape, requestOptions, resolvedRetry } = optionSchemas();
  const field = z.enum(['max_tokens', 'max_completion_tokens']);
  return httpProtocolSchemas({
    request: requestOptionShape,
    factory: { maxTokensField: field.optional() },
    adapter: {
      maxTokensField: field.default('max_tokens'),
      // Absent in configs built before these options existed (hand-built or logged ones): defaults apply.
      retry: resolvedRetry.default(resolveRetry(undefined)),
      request: requestOptions.default({}),
      perModel: z.record(z.string(), requestOptions).default({}),
    },
  });
});

/** What `openAICompatible()` accepts (also `brood run`'s `kind: 'openai'` providers). */
export const openAICompatibleOptionsSchema = (): ReturnType<typeof schemas>['options'] => schemas().options;

export function openAICompatible(options: OpenAICompatibleOptions): ModelProviderConfig {
  const parsed = parseOptions('openAICompatible', openAICompatibleOptionsSchema(), options);
  return httpProviderConfig('openai-compatible', parsed, parsed.models as ModelEntry[], {
    maxTokensField: parsed.maxTokensField ?? 'max_tokens',
  });
}

/** Checks an adapter's options and fills in their defaults (the catalog runs it, in the parent). */
export function readOpenAIOptions(config: ModelProviderConfig): OpenAIAdapterOptions {
  return readAdapterOptions<OpenAIAdapterOptions>(config, schemas().adapterOptions);
}

/** The adapter's options as the catalog checked and completed them (readOpenAIOptions). */
export function openAIOptionsOf(config: ModelProviderConfig): OpenAIAdapterOptions {
  return config.options as unknown as OpenAIAdapterOptions;
}
