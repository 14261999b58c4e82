/** The model catalog: which providers/models exist and how a partial route becomes a valid one (SPEC §8). */
import { BroodError } from '../errors.js';
import type { ModelRoute } from '../types.js';
import { readUntrusted } from '../util/untrusted.js';
import { readAiSdkOptions } from './ai-sdk/options.js';
import { readAnthropicOptions } from './anthropic.js';
import { readOpenAIOptions } from './openai.js';
import { readScriptedOptions } from './scripted.js';
import type { ModelInfo, ModelProviderConfig } from './types.js';

export interface ModelCatalog {
  providers(): { id: string; name: string }[];
  /** Listed models of a provider; unknown provider → UNKNOWN_MODEL. */
  models(provider: string): { id: string; efforts: string[]; defaultEffort?: string }[];
  /** Validates and completes a route; UNKNOWN_MODEL / INVALID_EFFORT / INVALID_CONFIG. */
  resolve(route: Partial<ModelRoute>): ModelRoute;
  config(providerId: string): ModelProviderConfig | undefined;
}

export function createModelCatalog(configs: ModelProviderConfig[]): ModelCatalog {
  const byId = indexConfigs(configs);

  function requireProvider(id: string): ModelProviderConfig {
    const config = byId.get(id);
    if (config === undefined)
      throw new BroodError('UNKNOWN_MODEL', `unknown model provider '${id}'`, { details: { provider: id } });
    return config;
  }

  return {
    providers: () => [...byId.values()].map((c) => ({ id: c.id, name: c.name })),
    models: (provider) => requireProvider(provider).models.map(publicModel),
    resolve: (route) => readUntrusted('INVALID_CONFIG', 'a model route', () => resolveRoute(route, requireProvider)),
    config: (providerId) => byId.get(providerId),
  };
}

/** Each built-in kind's check of its adapter options (INVALID_CONFIG naming the key), defaults filled in. */
const ADAPTER_OPTIONS: Partial<Record<ModelProviderConfig['kind'], (config: ModelProviderConfig) => object>> = {
  scripted: readScriptedOptions,
  'openai-compatible': readOpenAIOptions,
  'anthropic-compatible': readAnthropicOptions,
  'ai-sdk': readAiSdkOptions,
};

/**
 * The config with its adapter options checked and completed, in the parent (the catalog, and a queue
 * host for the configs it reads from Redis). Adapters take their options as given: configs can be
 * hand-built or older than an option, and checking them in every pool thread would load zod there.
 */
export function checkedProviderConfig(config: ModelProviderConfig): ModelProviderConfig {
  const read = ADAPTER_OPTIONS[config.kind];
  return read === undefined ? config : { ...config, options: { ...read(config) } };
}

function indexConfigs(configs: ModelProviderConfig[]): Map<string, ModelProviderConfig> {
  const byId = new Map<string, ModelProviderConfig>();
  for (const config of configs) {
    if (byId.has(config.id)) {
      throw new BroodError('INVALID_CONFIG', `duplicate model provider id '${config.id}'`, {
        details: { provider: config.id },
      });
    }
    byId.set(config.id, checkedProviderConfig(config));
  }
  return byId;
}

/** Copies so callers cannot mutate the catalog's configs through the returned lists. */
function publicModel(model: ModelInfo): { id: string; efforts: string[]; defaultEffort?: string } {
  const out: { id: string; efforts: string[]; defaultEffort?: string } = { id: model.id, efforts: [...model.efforts] };
  if (model.defaultEffort !== undefined) out.defaultEffort = model.defaultEffort;
  return out;
}

function resolveRoute(route: Partial<ModelRoute>, requireProvider: (id: string) => ModelProviderConfig): ModelRoute {
  const { provider, model } = route;
  if (typeof provider !== 'string' || provider === '' || typeof model !== 'string' || model === '') {
    throw new BroodError('UNKNOWN_MODEL', 'a model route must name both provider and model', {
      details: { provider, model },
    });
  }
  const config = requireProvider(provider);
  const info = config.models.find((m) => m.id === model);
  if (info === undefined && !config.acceptsUnlistedModels) {
    throw new BroodError('UNKNOWN_MODEL', `provider '${provider}' has no model '${model}'`, {
      details: { provider, model },
    });
  }
  const resolved: ModelRoute = { provider, model };
  const effort = resolveEffort(route.reasoningEffort, info, provider, model);
  if (effort !== undefined) resolved.reasoningEffort = effort;
  if (route.maxTokens !== undefined) resolved.maxTokens = checkMaxTokens(route.maxTokens);
  return resolved;
}

/** Listed models constrain effort to their list; an accepted unlisted model takes whatever was asked. */
function resolveEffort(
  effort: unknown,
  info: ModelInfo | undefined,
  provider: string,
  model: string,
): string | undefined {
  if (effort === undefined) return info?.defaultEffort;
  if (typeof effort !== 'string' || (info !== undefined && !info.efforts.includes(effort))) {
    throw new BroodError(
      'INVALID_EFFORT',
      `model '${provider}/${model}' does not support reasoning effort '${String(effort)}'`,
      {
        details: { provider, model, effort, efforts: info?.efforts ?? [] },
      },
    );
  }
  return effort;
}

function checkMaxTokens(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new BroodError('INVALID_CONFIG', `maxTokens must be a positive safe integer, got ${String(value)}`, {
      details: { maxTokens: value },
    });
  }
  return value;
}
