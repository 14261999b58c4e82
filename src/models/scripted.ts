/** Scripted (deterministic) model provider: config factory and option schema (SPEC §8). */
import { z } from 'zod';
import { lazy } from '../util/lazy.js';
import type { ModelInfo, ModelProviderConfig } from './types.js';
import { parseOptions } from './validate.js';

export type ScriptedTurn =
  | { text: string }
  | { toolCalls: { name: string; arguments: unknown }[]; text?: string }
  | { finish: 'max-tokens' | 'refusal' | 'error'; text?: string }
  | { fault: 'exit' | 'throw' | 'oom' | 'hang' };

export interface ScriptedScript {
  match: string;
  turns: ScriptedTurn[];
  latencyMs?: number;
  cpuMs?: number;
}

export interface ScriptedOptions {
  id: string;
  name?: string;
  models?: (string | { id: string; efforts?: string[]; defaultEffort?: string })[];
  scripts?: ScriptedScript[];
  fallback?: 'echo' | 'error';
}

/** What the adapter reads back out of `config.options` (after a structured clone into a worker). */
export interface ScriptedAdapterOptions {
  scripts: ScriptedScript[];
  fallback: 'echo' | 'error';
}

/** The option schemas, built on first use (src/util/lazy.ts): a pool thread loads this module with its adapter. */
const schemas = lazy(() => {
  // Strict objects so a turn mixing shapes (e.g. `fault` plus `text`) is rejected instead of silently
  // matching the first variant with extra keys stripped. Order matters only for error reporting.
  const toolCallSchema = z.strictObject({ name: z.string().min(1), arguments: z.unknown() });
  const turnSchema = z.union([
    z.strictObject({ text: z.string() }),
    z.strictObject({ toolCalls: z.array(toolCallSchema).min(1), text: z.string().optional() }),
    z.strictObject({ finish: z.enum(['max-tokens', 'refusal', 'error']), text: z.string().optional() }),
    z.strictObject({ fault: z.enum(['exit', 'throw', 'oom', 'hang']) }),
  ]);
  // Capped like every millisecond option: a Node timer turns larger delays into 1 ms.
  const msSchema = z
    .number()
    .finite()
    .nonnegative()
    .max(2 ** 31 - 1, 'at most 2147483647 ms (the largest delay a Node.js timer supports)')
    .optional();
  const scriptSchema = z.strictObject({
    match: z.string(),
    turns: z.array(turnSchema),
    latencyMs: msSchema,
    cpuMs: msSchema,
  });
  const modelSchema = z.union([
    z.string().min(1),
    z
      .strictObject({
        id: z.string().min(1),
        efforts: z.array(z.string()).optional(),
        defaultEffort: z.string().optional(),
      })
      .refine((m) => m.defaultEffort === undefined || (m.efforts ?? []).includes(m.defaultEffort), {
        message: 'defaultEffort must be one of efforts',
        path: ['defaultEffort'],
      }),
  ]);
  const fallbackSchema = z.enum(['echo', 'error']);
  const optionsSchema = z.strictObject({
    id: z.string().min(1),
    name: z.string().optional(),
    models: z.array(modelSchema).optional(),
    scripts: z.array(scriptSchema).optional(),
    fallback: fallbackSchema.optional(),
  });
  return {
    options: optionsSchema,
    adapterOptions: z.object({ scripts: z.array(scriptSchema), fallback: fallbackSchema }),
  };
});

export function scriptedModels(options: ScriptedOptions): ModelProviderConfig {
  const parsed = parseOptions('scriptedModels', schemas().options, options);
  const adapterOptions: ScriptedAdapterOptions = {
    scripts: (parsed.scripts ?? []) as ScriptedScript[],
    fallback: parsed.fallback ?? 'echo',
  };
  return {
    kind: 'scripted',
    id: parsed.id,
    name: parsed.name ?? parsed.id,
    models: (parsed.models ?? ['scripted']).map(toModelInfo),
    acceptsUnlistedModels: false,
    options: { ...adapterOptions },
  };
}

function toModelInfo(model: string | { id: string; efforts?: string[]; defaultEffort?: string }): ModelInfo {
  if (typeof model === 'string') return { id: model, efforts: [] };
  const info: ModelInfo = { id: model.id, efforts: [...(model.efforts ?? [])] };
  if (model.defaultEffort !== undefined) info.defaultEffort = model.defaultEffort;
  return info;
}

/**
 * Validates a scripted config's adapter options (INVALID_CONFIG naming the key). The model catalog runs
 * it in the parent for every scripted config, also hand-built ones, before any thread receives them.
 */
export function readScriptedOptions(config: ModelProviderConfig): ScriptedAdapterOptions {
  const raw = rawAdapterOptions(config);
  return parseOptions(`scripted provider '${config.id}'`, schemas().adapterOptions, raw) as ScriptedAdapterOptions;
}

/**
 * The adapter's options as the parent's catalog checked them (readScriptedOptions): a pool thread
 * receives its configs from its parent, and re-checking them with zod would load zod in every thread.
 */
export function scriptedOptionsOf(config: ModelProviderConfig): ScriptedAdapterOptions {
  return rawAdapterOptions(config) as ScriptedAdapterOptions;
}

function rawAdapterOptions(config: ModelProviderConfig): { scripts: unknown; fallback: unknown } {
  return { scripts: config.options.scripts ?? [], fallback: config.options.fallback ?? 'echo' };
}

/** True when any script of a scripted config contains a fault turn (inline runners refuse these). */
export function hasFaultTurns(config: ModelProviderConfig): boolean {
  if (config.kind !== 'scripted') return false;
  const scripts = config.options.scripts;
  if (!Array.isArray(scripts)) return false;
  return scripts.some((script: unknown) => {
    const turns = (script as { turns?: unknown } | null)?.turns;
    return (
      Array.isArray(turns) &&
      turns.some((turn: unknown) => typeof turn === 'object' && turn !== null && 'fault' in turn)
    );
  });
}
