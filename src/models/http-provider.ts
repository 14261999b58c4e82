/**
 * What both HTTP provider factories (openAICompatible, anthropicCompatible) share: the provider-level
 * option fields, the part of the adapter options they carry alike, and the provider config they build.
 * A protocol adds its own fields and request-option shape.
 */
import { z } from 'zod';
import { lazy } from '../util/lazy.js';
import type { HttpAdapterOptions } from './http-adapter.js';
import {
  type ModelEntry,
  modelEntrySchema,
  optionSchemas,
  perModelOptions,
  pickRequestOptions,
  type RetryOptions,
  resolveRetry,
  toModelInfo,
} from './request-options.js';
import type { ModelProviderConfig } from './types.js';
import { parseOptions } from './validate.js';

/** The options every HTTP factory takes besides its models and request options. */
export interface HttpProviderOptions {
  id: string;
  name?: string;
  baseURL: string;
  apiKey?: string;
  /** Name of an environment variable holding the key, read in the worker at request time. */
  apiKeyEnv?: string;
  /** Default true: endpoints often serve more models than are listed. */
  acceptsUnlistedModels?: boolean;
  retry?: RetryOptions;
}

/** zod shape of HttpProviderOptions; spread into each factory's strict schema. */
export const httpProviderShape = lazy(() => {
  const { httpURL, retry } = optionSchemas();
  return {
    id: z.string().min(1),
    name: z.string().optional(),
    baseURL: httpURL,
    apiKey: z.string().optional(),
    apiKeyEnv: z.string().min(1).optional(),
    acceptsUnlistedModels: z.boolean().optional(),
    retry: retry.optional(),
  };
});

/** zod shape of the connection part of HttpAdapterOptions (checked by the catalog: configs can be hand-built). */
export const httpConnectionShape = lazy(() => ({
  baseURL: optionSchemas().httpURL,
  apiKey: z.string().optional(),
  apiKeyEnv: z.string().optional(),
}));

/**
 * A protocol's two schemas, each the shared part plus the protocol's own: what its factory accepts
 * (provider fields, models with their request options, its own fields, provider-wide request options),
 * and what its adapter reads back out of a config (the connection, then its own fields).
 */
export function httpProtocolSchemas<
  Request extends z.core.$ZodLooseShape,
  Factory extends z.core.$ZodLooseShape,
  Adapter extends z.core.$ZodLooseShape,
>(shapes: { request: Request; factory: Factory; adapter: Adapter }) {
  return {
    options: z.strictObject({
      ...httpProviderShape(),
      models: z.array(modelEntrySchema(shapes.request)),
      ...shapes.factory,
      ...shapes.request,
    }),
    adapterOptions: z.object({ ...httpConnectionShape(), ...shapes.adapter }),
  };
}

/**
 * The provider config of a parsed factory call: the shared adapter options (connection, retry,
 * request options provider-wide and per model) plus the protocol's own `extra` ones.
 */
export function httpProviderConfig(
  kind: 'openai-compatible' | 'anthropic-compatible',
  parsed: HttpProviderOptions & Record<string, unknown>,
  models: ModelEntry[],
  extra: Record<string, unknown>,
): ModelProviderConfig {
  const adapterOptions: HttpAdapterOptions = {
    baseURL: parsed.baseURL,
    retry: resolveRetry(parsed.retry),
    request: pickRequestOptions(parsed),
    perModel: perModelOptions(models),
  };
  // Keep absent keys absent: the config is logged and structured-cloned, `undefined` noise helps no one.
  if (parsed.apiKey !== undefined) adapterOptions.apiKey = parsed.apiKey;
  if (parsed.apiKeyEnv !== undefined) adapterOptions.apiKeyEnv = parsed.apiKeyEnv;
  return {
    kind,
    id: parsed.id,
    name: parsed.name ?? parsed.id,
    models: models.map(toModelInfo),
    acceptsUnlistedModels: parsed.acceptsUnlistedModels ?? true,
    options: { ...adapterOptions, ...extra },
  };
}

/** An adapter's options checked in the parent (a config can be hand-built): INVALID_CONFIG naming the provider. */
export function readAdapterOptions<O>(config: ModelProviderConfig, schema: z.ZodType): O {
  return parseOptions(`${config.kind} provider '${config.id}'`, schema, config.options) as O;
}
