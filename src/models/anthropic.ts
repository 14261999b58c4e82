/** Anthropic Messages API provider config factory. */
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { lazy } from '../util/lazy.js';
import type { HttpAdapterOptions } from './http-adapter.js';
import {
  type HttpProviderOptions,
  httpProtocolSchemas,
  httpProviderConfig,
  readAdapterOptions,
} from './http-provider.js';
import { optionSchemas, type RequestOptions } from './request-options.js';
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

/** What the adapter reads back out of `config.options`. */
export interface AnthropicAdapterOptions extends HttpAdapterOptions<AnthropicRequestOptions> {
  anthropicVersion: string;
  thinkingBudgets: Record<string, number>;
}

const schemas = lazy(() => {
  const { seed: _seed, ...sharedShape } = optionSchemas().requestOptionShape;
  const anthropicShape = {
    ...sharedShape,
    responseFormat: z
      .strictObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) })
      .optional(),
  };
  const anthropicRequestSchema = z.strictObject(anthropicShape);
  const budgetsSchema = z.record(z.string().min(1), z.number().int().min(1024));
  return httpProtocolSchemas({
    request: anthropicShape,
    factory: { anthropicVersion: z.string().min(1).optional(), thinkingBudgets: budgetsSchema.optional() },
    adapter: {
      anthropicVersion: z.string().min(1),
      retry: optionSchemas().resolvedRetry,
      thinkingBudgets: budgetsSchema,
      request: anthropicRequestSchema,
      perModel: z.record(z.string(), anthropicRequestSchema),
    },
  });
});

/** What `anthropicCompatible()` accepts (also `brood run`'s `kind: 'anthropic'` providers). */
export const anthropicCompatibleOptionsSchema = (): ReturnType<typeof schemas>['options'] => schemas().options;

export function anthropicCompatible(options: AnthropicCompatibleOptions): ModelProviderConfig {
  const parsed = parseOptions('anthropicCompatible', anthropicCompatibleOptionsSchema(), options);
  return httpProviderConfig('anthropic-compatible', parsed, parsed.models as AnthropicModelEntry[], {
    anthropicVersion: parsed.anthropicVersion ?? '2023-06-01',
    thinkingBudgets: { ...DEFAULTS.anthropicThinkingBudgets, ...parsed.thinkingBudgets },
  });
}

/** Checks an adapter's options (the catalog runs it, in the parent). */
export function readAnthropicOptions(config: ModelProviderConfig): AnthropicAdapterOptions {
  return readAdapterOptions<AnthropicAdapterOptions>(config, schemas().adapterOptions);
}

/** The adapter's options as the catalog checked them (readAnthropicOptions). */
export function anthropicOptionsOf(config: ModelProviderConfig): AnthropicAdapterOptions {
  return config.options as unknown as AnthropicAdapterOptions;
}
