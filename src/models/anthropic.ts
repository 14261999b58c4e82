/** Anthropic Messages API provider config factory (issue 15). */
import { z } from 'zod';
import type { HttpAdapterOptions } from './http-adapter.js';
import {
  httpConnectionShape,
  httpProviderConfig,
  type HttpProviderOptions,
  httpProviderShape,
  readAdapterOptions,
} from './http-provider.js';
import { modelEntrySchema, type RequestOptions, requestOptionShape, resolvedRetrySchema } from './request-options.js';
import type { ModelProviderConfig } from './types.js';
import { parseOptions } from './validate.js';

/** The Messages API has no `seed`; its response format is `{ type: 'json_schema', schema }` (sent as `output_config.format`). */
export type AnthropicRequestOptions = Omit<RequestOptions, 'seed' | 'responseFormat'> & {
  responseFormat?: { type: 'json_schema'; schema: Record<string, unknown> };
};

export type AnthropicModelEntry =
  | string
  | ({ id: string; efforts?: string[]; defaultEffort?: string; maxTokens?: number } & AnthropicRequestOptions);

export interface AnthropicCompatibleOptions extends AnthropicRequestOptions, HttpProviderOptions {
  /** The server root without `/v1` (as Anthropic's SDK takes it); requests go to `{baseURL}/v1/messages`. */
  baseURL: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  models: AnthropicModelEntry[];
  /** The `anthropic-version` header; default '2023-06-01', the version every compatible server speaks. */
  anthropicVersion?: string;
  /** Extended-thinking budget per reasoning effort, merged over the default table (README). */
  thinkingBudgets?: Record<string, number>;
}

/** Reasoning effort → `thinking.budget_tokens` (the API's minimum budget is 1024). */
export const DEFAULT_THINKING_BUDGETS: Readonly<Record<string, number>> = Object.freeze({
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 65536,
});

/** What the adapter reads back out of `config.options`. */
export interface AnthropicAdapterOptions extends HttpAdapterOptions<AnthropicRequestOptions> {
  anthropicVersion: string;
  thinkingBudgets: Record<string, number>;
}

const { seed: _seed, ...sharedShape } = requestOptionShape;
const anthropicShape = {
  ...sharedShape,
  responseFormat: z
    .strictObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) })
    .optional(),
};
const anthropicRequestSchema = z.strictObject(anthropicShape);
const budgetsSchema = z.record(z.string().min(1), z.number().int().min(1024));

/** What `anthropicCompatible()` accepts (also `brood run`'s `kind: 'anthropic'` providers). */
export const anthropicCompatibleOptionsSchema = z.strictObject({
  ...httpProviderShape,
  models: z.array(modelEntrySchema(anthropicShape)),
  anthropicVersion: z.string().min(1).optional(),
  thinkingBudgets: budgetsSchema.optional(),
  ...anthropicShape,
});
const adapterOptionsSchema = z.object({
  ...httpConnectionShape,
  anthropicVersion: z.string().min(1),
  retry: resolvedRetrySchema,
  thinkingBudgets: budgetsSchema,
  request: anthropicRequestSchema,
  perModel: z.record(z.string(), anthropicRequestSchema),
});

export function anthropicCompatible(options: AnthropicCompatibleOptions): ModelProviderConfig {
  const parsed = parseOptions('anthropicCompatible', anthropicCompatibleOptionsSchema, options);
  return httpProviderConfig('anthropic-compatible', parsed, parsed.models as AnthropicModelEntry[], {
    anthropicVersion: parsed.anthropicVersion ?? '2023-06-01',
    thinkingBudgets: { ...DEFAULT_THINKING_BUDGETS, ...parsed.thinkingBudgets },
  });
}

export function readAnthropicOptions(config: ModelProviderConfig): AnthropicAdapterOptions {
  return readAdapterOptions<AnthropicAdapterOptions>(config, adapterOptionsSchema);
}
