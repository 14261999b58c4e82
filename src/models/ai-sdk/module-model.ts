/**
 * The module shape's models: the module's export called with a model id (and the config's options)
 * in the thread that runs the driver. Anything that is not a supported LanguageModel is
 * INVALID_CONFIG naming the module, the export and, for a model object, its specification version.
 */
import { BroodError, errorMessage } from '../../errors.js';
import type { ModelProviderConfig } from '../types.js';
import { type LanguageModelLike, languageModelProblem } from './language-model.js';
import { aiSdkOptionsOf } from './options.js';

export type Importer = (url: string) => Promise<unknown>;

/** Builds `modelId`'s model from the config's module; rejects INVALID_CONFIG. */
export async function moduleModel(
  config: ModelProviderConfig,
  modelId: string,
  importModule: Importer,
): Promise<LanguageModelLike> {
  const url = config.moduleUrl ?? '';
  const { export: name, moduleOptions } = aiSdkOptionsOf(config);
  const where = `AI SDK module ${url} (export '${name}')`;
  let mod: Record<string, unknown>;
  try {
    mod = (await importModule(url)) as Record<string, unknown>;
  } catch (error) {
    throw invalid(config, `cannot load ${where}: ${errorMessage(error)}`, error);
  }
  const factory = mod[name];
  if (typeof factory !== 'function')
    throw invalid(config, `${where}: the export is not a function (modelId, options) => LanguageModel`);
  let model: unknown;
  try {
    model = await (factory as (id: string, options?: unknown) => unknown)(modelId, moduleOptions);
  } catch (error) {
    throw invalid(config, `${where} threw for model '${modelId}': ${errorMessage(error)}`, error);
  }
  const problem = languageModelProblem(model);
  if (problem !== undefined) throw invalid(config, `${where} returned for model '${modelId}': ${problem}`);
  return model as LanguageModelLike;
}

function invalid(config: ModelProviderConfig, message: string, cause?: unknown): BroodError {
  return new BroodError('INVALID_CONFIG', message, {
    details: { provider: config.id, module: config.moduleUrl, export: aiSdkOptionsOf(config).export },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The parent's check of a module-shape route, once per provider and model: createAgent fails with the
 * module's problem instead of the agent's first turn. Its model is built here only to be looked at;
 * the threads build their own.
 */
const checked = new WeakMap<ModelProviderConfig, Map<string, Promise<void>>>();

export async function checkAiSdkRoute(config: ModelProviderConfig | undefined, modelId: string): Promise<void> {
  if (config?.kind !== 'ai-sdk' || aiSdkOptionsOf(config).shape !== 'module') return;
  let byModel = checked.get(config);
  if (byModel === undefined) {
    byModel = new Map();
    checked.set(config, byModel);
  }
  let check = byModel.get(modelId);
  if (check === undefined) {
    check = moduleModel(config, modelId, (url) => import(url)).then(() => undefined);
    byModel.set(modelId, check);
    // A failed check is not kept: the module may be fixed (or written) before the next createAgent.
    check.catch(() => byModel.delete(modelId));
  }
  return check;
}
