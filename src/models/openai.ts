/** OpenAI-compatible (Chat Completions) provider config factory (SPEC §8). */
import { z } from 'zod';
import type { ModelInfo, ModelProviderConfig } from './types.js';
import { parseOptions } from './validate.js';

export interface OpenAICompatibleOptions {
  id: string;
  name?: string;
  baseURL: string;
  apiKey?: string;
  /** Name of an environment variable holding the key, read in the worker at request time. */
  apiKeyEnv?: string;
  models: { id: string; efforts?: string[]; defaultEffort?: string; maxTokens?: number }[];
  /** Default true: endpoints often serve more models than are listed. */
  acceptsUnlistedModels?: boolean;
  /** Default 'max_tokens'; OpenAI's reasoning models need 'max_completion_tokens'. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

/** What the adapter reads back out of `config.options`. */
export interface OpenAIAdapterOptions {
  baseURL: string;
  apiKey?: string;
  apiKeyEnv?: string;
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

const httpURL = z
  .string()
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { message: 'must be an http(s) URL' });
const modelSchema = z
  .strictObject({
    id: z.string().min(1),
    efforts: z.array(z.string()).optional(),
    defaultEffort: z.string().optional(),
    maxTokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .refine((m) => m.defaultEffort === undefined || (m.efforts ?? []).includes(m.defaultEffort), {
    message: 'defaultEffort must be one of efforts',
    path: ['defaultEffort'],
  });
const fieldSchema = z.enum(['max_tokens', 'max_completion_tokens']);
const optionsSchema = z.strictObject({
  id: z.string().min(1),
  name: z.string().optional(),
  baseURL: httpURL,
  apiKey: z.string().optional(),
  apiKeyEnv: z.string().min(1).optional(),
  models: z.array(modelSchema),
  acceptsUnlistedModels: z.boolean().optional(),
  maxTokensField: fieldSchema.optional(),
});
const adapterOptionsSchema = z.object({
  baseURL: httpURL,
  apiKey: z.string().optional(),
  apiKeyEnv: z.string().optional(),
  maxTokensField: fieldSchema.default('max_tokens'),
});

export function openAICompatible(options: OpenAICompatibleOptions): ModelProviderConfig {
  const parsed = parseOptions('openAICompatible', optionsSchema, options);
  const adapterOptions: OpenAIAdapterOptions = { baseURL: parsed.baseURL, maxTokensField: parsed.maxTokensField ?? 'max_tokens' };
  // Keep absent keys absent: the config is logged and structured-cloned, `undefined` noise helps no one.
  if (parsed.apiKey !== undefined) adapterOptions.apiKey = parsed.apiKey;
  if (parsed.apiKeyEnv !== undefined) adapterOptions.apiKeyEnv = parsed.apiKeyEnv;
  return {
    kind: 'openai-compatible',
    id: parsed.id,
    name: parsed.name ?? parsed.id,
    models: parsed.models.map(toModelInfo),
    acceptsUnlistedModels: parsed.acceptsUnlistedModels ?? true,
    options: { ...adapterOptions },
  };
}

function toModelInfo(model: z.infer<typeof modelSchema>): ModelInfo {
  const info: ModelInfo = { id: model.id, efforts: [...(model.efforts ?? [])] };
  if (model.defaultEffort !== undefined) info.defaultEffort = model.defaultEffort;
  if (model.maxTokens !== undefined) info.maxTokens = model.maxTokens;
  return info;
}

export function readOpenAIOptions(config: ModelProviderConfig): OpenAIAdapterOptions {
  return parseOptions(`openai-compatible provider '${config.id}'`, adapterOptionsSchema, config.options) as OpenAIAdapterOptions;
}
