/**
 * `aiSdkModels()`: AI SDK LanguageModels as one brood provider, in either of two shapes. A module
 * shape names an ES module whose export builds a model from its id in each pool thread (the config
 * stays plain data and carries the module's URL in `moduleUrl`, as kind 'module' does). A proxied
 * shape keeps model objects in the parent (any middleware, a custom fetch, a registry); drivers'
 * requests cross to them. The objects ride on the config under a symbol, which a structured clone
 * drops: a thread or a queue host gets the config without them.
 */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { BroodError } from '../../errors.js';
import { lazy } from '../../util/lazy.js';
import {
  type ModelEntry,
  modelEntrySchema,
  optionSchemas,
  type ResolvedRetry,
  type RetryOptions,
  resolveRetry,
  toModelInfo,
} from '../request-options.js';
import type { ModelInfo, ModelProviderConfig } from '../types.js';
import { parseOptions } from '../validate.js';
import { type LanguageModelLike, languageModelProblem } from './language-model.js';

export interface AiSdkModelsOptions {
  id: string;
  name?: string;
  /**
   * Module shape: a file URL or an absolute path of an ES module whose `export` is
   * `(modelId: string, options?: unknown) => LanguageModel`, called in each pool thread.
   */
  module?: string | URL;
  /** The module's export to call (default 'default'). */
  export?: string;
  /** Handed to the export as its second argument; must survive a structured clone into a worker. */
  options?: unknown;
  /**
   * Module shape: model ids, or `{ id, efforts?, defaultEffort?, maxTokens? }`.
   * Proxied shape: LanguageModel objects by model id, kept in the parent (or
   * `{ model, efforts?, defaultEffort?, maxTokens? }` for a model with reasoning efforts).
   */
  models: ModelEntry[] | Record<string, unknown>;
  /** As openAICompatible's: retries of failures before the stream starts (a governed 429/503 waits for the scheduler). */
  retry?: RetryOptions;
}

/** What the adapter reads back out of `config.options`. */
export interface AiSdkAdapterOptions {
  shape: 'module' | 'proxy';
  /** Module shape: the export to call. */
  export: string;
  /** Module shape: its second argument. */
  moduleOptions?: unknown;
  retry: ResolvedRetry;
}

const PROXIED_MODELS = Symbol('brood.aiSdkModels');
type ProxiedConfig = ModelProviderConfig & { [PROXIED_MODELS]?: Record<string, LanguageModelLike> };

/** The parent's model objects of a proxied-shape config (undefined for any other config). */
export function proxiedModelsOf(config: ModelProviderConfig): Record<string, LanguageModelLike> | undefined {
  return (config as ProxiedConfig)[PROXIED_MODELS];
}

/**
 * Provider configs cloned as plain data (as they will cross to threads), each proxied shape's model
 * objects carried over: they stay in the parent, by reference.
 */
export function cloneProviderConfigs(configs: ModelProviderConfig[]): ModelProviderConfig[] {
  const clones = structuredClone(configs);
  configs.forEach((config, i) => {
    const objects = proxiedModelsOf(config);
    if (objects !== undefined) (clones[i] as ProxiedConfig)[PROXIED_MODELS] = objects;
  });
  return clones;
}

const moduleEntries = lazy(() => z.array(modelEntrySchema({})));
const optionsSchema = lazy(() =>
  z.strictObject({
    id: z.string().min(1),
    name: z.string().optional(),
    module: z
      .union([z.string(), z.instanceof(URL).transform((url) => url.href)])
      .transform(moduleHref)
      .refine((href) => href !== undefined, { message: 'must be a file URL or an absolute path' })
      .optional(),
    export: z.string().min(1).optional(),
    options: z.unknown().optional(),
    models: z.union([moduleEntries(), z.record(z.string().min(1), z.unknown())]),
    retry: optionSchemas().retry.optional(),
  }),
);

/**
 * `brood run`'s `kind: 'ai-sdk'` providers: the module shape only (JSON holds no model object), its
 * `module` a path relative to the config file, an absolute path or a file URL (the loader resolves it).
 */
export const aiSdkRunConfigSchema = lazy(() =>
  z.strictObject({
    kind: z.literal('ai-sdk'),
    id: z.string().min(1),
    name: z.string().optional(),
    module: z.string().min(1),
    export: z.string().min(1).optional(),
    options: z.record(z.string(), z.unknown()).optional(),
    models: moduleEntries(),
    retry: optionSchemas().retry.optional(),
  }),
);

export function aiSdkModels(input: AiSdkModelsOptions): ModelProviderConfig {
  const parsed = parseOptions('aiSdkModels', optionsSchema(), input);
  const retry = resolveRetry(parsed.retry);
  const base = { kind: 'ai-sdk' as const, id: parsed.id, name: parsed.name ?? parsed.id, acceptsUnlistedModels: false };
  if (parsed.module !== undefined) {
    if (!Array.isArray(parsed.models)) invalid('models', 'with a module: model ids or { id, efforts } entries');
    const options: AiSdkAdapterOptions = { shape: 'module', export: parsed.export ?? 'default', retry };
    if (parsed.options !== undefined) options.moduleOptions = cloneable(parsed.options);
    const models = (parsed.models as ModelEntry[]).map(toModelInfo);
    return { ...base, models, options: { ...options }, moduleUrl: parsed.module as string };
  }
  if (Array.isArray(parsed.models)) invalid('models', 'without a module: LanguageModel objects by model id');
  for (const key of ['export', 'options'] as const) if (parsed[key] !== undefined) invalid(key, 'only with a module');
  const objects: Record<string, LanguageModelLike> = {};
  const infos: ModelInfo[] = [];
  for (const [modelId, value] of Object.entries(parsed.models as Record<string, unknown>)) {
    const { model, entry } = proxiedEntry(modelId, value);
    const problem = languageModelProblem(model);
    if (problem !== undefined) invalid(`models.${modelId}`, problem);
    objects[modelId] = model as LanguageModelLike;
    infos.push(toModelInfo(entry));
  }
  const options: AiSdkAdapterOptions = { shape: 'proxy', export: 'default', retry };
  const config: ProxiedConfig = { ...base, models: infos, options: { ...options }, [PROXIED_MODELS]: objects };
  return config;
}

/** A proxied model: the object itself, or `{ model, efforts?, defaultEffort?, maxTokens? }`. */
function proxiedEntry(modelId: string, value: unknown): { model: unknown; entry: ModelEntry } {
  if (languageModelProblem(value) === undefined || typeof value !== 'object' || value === null || !('model' in value))
    return { model: value, entry: modelId };
  const { model, ...rest } = value as { model: unknown } & Record<string, unknown>;
  const entry = parseOptions(`aiSdkModels: model '${modelId}'`, moduleEntries().element, { id: modelId, ...rest });
  return { model, entry: entry as ModelEntry };
}

const adapterOptionsSchema = lazy(() =>
  z.object({
    shape: z.enum(['module', 'proxy']),
    export: z.string().min(1).default('default'),
    moduleOptions: z.unknown().optional(),
    retry: optionSchemas().resolvedRetry.default(resolveRetry(undefined)),
  }),
);

/** Checks a config's options and fills in their defaults (the catalog runs it, in the parent). */
export function readAiSdkOptions(config: ModelProviderConfig): AiSdkAdapterOptions {
  const options = parseOptions(`model provider '${config.id}'`, adapterOptionsSchema(), config.options);
  if (
    options.shape === 'module' &&
    (typeof config.moduleUrl !== 'string' || moduleHref(config.moduleUrl) === undefined)
  )
    invalid('module', `model provider '${config.id}' of kind 'ai-sdk' needs a module URL (moduleUrl)`);
  return options as AiSdkAdapterOptions;
}

export function aiSdkOptionsOf(config: ModelProviderConfig): AiSdkAdapterOptions {
  return config.options as unknown as AiSdkAdapterOptions;
}

/** A file URL (or any absolute URL) as it is, an absolute path as its file URL; undefined otherwise. */
function moduleHref(value: string): string | undefined {
  if (isAbsolute(value)) return pathToFileURL(value).href;
  return URL.canParse(value) && !/^[a-z]:$/i.test(new URL(value).protocol) ? value : undefined;
}

function cloneable(value: unknown): unknown {
  try {
    // Configs are shipped to worker threads; a function or class instance would fail there, later and obscurely.
    return structuredClone(value);
  } catch (error) {
    return invalid('options', `must be structured-cloneable (${(error as Error).message})`);
  }
}

function invalid(key: string, reason: string): never {
  throw new BroodError('INVALID_CONFIG', `aiSdkModels: invalid option '${key}': ${reason}`, { details: { key } });
}
