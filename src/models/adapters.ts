/** Loads the adapter for a provider config inside whichever thread runs the agent loop. */
import { BroodError, errorMessage } from '../errors.js';
import type { ModelAdapter, ModelProviderConfig } from './types.js';

type ModuleImporter = (url: string) => Promise<unknown>;

let importModule: ModuleImporter = (url) => import(url);

/**
 * Who performs the dynamic `import()` of custom adapter modules. A pool thread's bundle runs from a
 * code cache (vm.Script), where V8's `import()` has no loader behind it on Node 20; the thread's entry
 * (a normal CommonJS module) hands its own `import` in here.
 */
export function useModuleImporter(importer: ModuleImporter): void {
  importModule = importer;
}

/**
 * Each kind's module loads on first use: a pool thread's bundle then initialises only the adapters
 * its runtime uses (their modules build ~240 zod schemas for options and streams, 176 of them the
 * HTTP adapters', part of every thread's boot when they were imported eagerly).
 */
export async function loadAdapter(config: ModelProviderConfig): Promise<ModelAdapter> {
  switch (config.kind) {
    case 'scripted':
      return (await import('./scripted-adapter.js')).createScriptedAdapter(config);
    case 'openai-compatible':
      return (await import('./openai-adapter.js')).createOpenAIAdapter(config);
    case 'anthropic-compatible':
      return (await import('./anthropic-adapter.js')).createAnthropicAdapter(config);
    case 'module':
      return loadModuleAdapter(config);
    case 'ai-sdk':
      return (await import('./ai-sdk/adapter.js')).createAiSdkAdapter(config, (url) => importModule(url));
    default:
      throw new BroodError(
        'INVALID_CONFIG',
        `unknown model provider kind '${String((config as { kind?: unknown }).kind)}'`,
      );
  }
}

/** Custom adapters are referenced by URL because functions cannot be structured-cloned into workers. */
async function loadModuleAdapter(config: ModelProviderConfig): Promise<ModelAdapter> {
  if (typeof config.moduleUrl !== 'string' || config.moduleUrl === '') {
    throw new BroodError('INVALID_CONFIG', `model provider '${config.id}' of kind 'module' needs a moduleUrl`);
  }
  let mod: { createAdapter?: unknown };
  try {
    mod = (await importModule(config.moduleUrl)) as { createAdapter?: unknown };
  } catch (error) {
    throw new BroodError('INVALID_CONFIG', `cannot load adapter module ${config.moduleUrl}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  if (typeof mod.createAdapter !== 'function') {
    throw new BroodError('INVALID_CONFIG', `adapter module ${config.moduleUrl} does not export createAdapter(config)`);
  }
  const adapter = (await (mod.createAdapter as (c: ModelProviderConfig) => unknown)(config)) as
    | ModelAdapter
    | undefined;
  if (typeof adapter?.request !== 'function') {
    throw new BroodError(
      'INVALID_CONFIG',
      `createAdapter() of ${config.moduleUrl} did not return an adapter with request()`,
    );
  }
  return adapter;
}
