/** OpenAI-compatible (Chat Completions) provider config factory (SPEC §8, issue 15). */
import { z } from 'zod';
import {
  httpURL,
  modelEntrySchema,
  perModelOptions,
  pickRequestOptions,
  requestOptionShape,
  requestOptionsSchema,
  resolvedRetrySchema,
  resolveRetry,
  retrySchema,
  toModelInfo,
  type ModelEntry,
  type RequestOptions,
  type ResolvedRetry,
  type RetryOptions,
} from './request-options.js';
import type { ModelProviderConfig } from './types.js';
import { parseOptions } from './validate.js';

export interface OpenAICompatibleOptions extends RequestOptions {
  id: string;
  name?: string;
  /** The `/v1` base, e.g. `https://api.openai.com/v1`; requests go to `{baseURL}/chat/completions`. */
  baseURL: string;
  apiKey?: string;
  /** Name of an environment variable holding the key, read in the worker at request time. */
  apiKeyEnv?: string;
  /** Plain ids, or objects carrying efforts, an output cap and request-option overrides. */
  models: ModelEntry[];
  /** Default true: endpoints often serve more models than are listed. */
  acceptsUnlistedModels?: boolean;
  /** Default 'max_tokens'; OpenAI's reasoning models need 'max_completion_tokens'. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  retry?: RetryOptions;
}

/** What the adapter reads back out of `config.options` (after a structured clone into a worker). */
export interface OpenAIAdapterOptions {
  baseURL: string;
  apiKey?: string;
  apiKeyEnv?: string;
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  retry: ResolvedRetry;
  /** Provider-wide request options. */
  request: RequestOptions;
  /** Overrides by model id. */
  perModel: Record<string, RequestOptions>;
}

const fieldSchema = z.enum(['max_tokens', 'max_completion_tokens']);
const optionsSchema = z.strictObject({
  id: z.string().min(1),
  name: z.string().optional(),
  baseURL: httpURL,
  apiKey: z.string().optional(),
  apiKeyEnv: z.string().min(1).optional(),
  models: z.array(modelEntrySchema(requestOptionShape)),
  acceptsUnlistedModels: z.boolean().optional(),
  maxTokensField: fieldSchema.optional(),
  retry: retrySchema.optional(),
  ...requestOptionShape,
});
const adapterOptionsSchema = z.object({
  baseURL: httpURL,
  apiKey: z.string().optional(),
  apiKeyEnv: z.string().optional(),
  maxTokensField: fieldSchema.default('max_tokens'),
  // Absent in configs built before these options existed (hand-built or logged ones): defaults apply.
  retry: resolvedRetrySchema.default(resolveRetry(undefined)),
  request: requestOptionsSchema.default({}),
  perModel: z.record(z.string(), requestOptionsSchema).default({}),
});

export function openAICompatible(options: OpenAICompatibleOptions): ModelProviderConfig {
  const parsed = parseOptions('openAICompatible', optionsSchema, options);
  const models = parsed.models as ModelEntry[];
  const adapterOptions: OpenAIAdapterOptions = {
    baseURL: parsed.baseURL,
    maxTokensField: parsed.maxTokensField ?? 'max_tokens',
    retry: resolveRetry(parsed.retry),
    request: pickRequestOptions(parsed),
    perModel: perModelOptions(models),
  };
  // Keep absent keys absent: the config is logged and structured-cloned, `undefined` noise helps no one.
  if (parsed.apiKey !== undefined) adapterOptions.apiKey = parsed.apiKey;
  if (parsed.apiKeyEnv !== undefined) adapterOptions.apiKeyEnv = parsed.apiKeyEnv;
  return {
    kind: 'openai-compatible',
    id: parsed.id,
    name: parsed.name ?? parsed.id,
    models: models.map(toModelInfo),
    acceptsUnlistedModels: parsed.acceptsUnlistedModels ?? true,
    options: { ...adapterOptions },
  };
}

export function readOpenAIOptions(config: ModelProviderConfig): OpenAIAdapterOptions {
  return parseOptions(
    `openai-compatible provider '${config.id}'`,
    adapterOptionsSchema,
    config.options,
  ) as OpenAIAdapterOptions;
}
