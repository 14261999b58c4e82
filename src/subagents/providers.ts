/**
 * The built-in providers (SPEC §9). Each is plain data plus a start function on top of
 * ProviderContext.createChild, exactly what a third-party in-process provider would write.
 */
import { z } from 'zod';
import { isQueueRunnerConfig, type QueueRunnerConfig, type RunnerChoice } from '../queue/config.js';
import { parseConfig } from '../util/untrusted.js';
import type { ContinuablePrepareRequest, SubagentCapabilities, SubagentProvider } from './types.js';

// A provider's name is checked when it is registered (validateProvider), like any provider's.
const spawnOptions = z.strictObject({
  name: z.string().optional(),
  runner: z
    .union([
      z.enum(['worker', 'inline']),
      z.custom<QueueRunnerConfig>(isQueueRunnerConfig, "'worker', 'inline' or a queueRunner(...)"),
    ])
    .optional(),
});
const forkOptions = z.strictObject({ name: z.string().optional(), allowRouteChange: z.boolean().optional() });
const inlineOptions = z.strictObject({ name: z.string().optional() });

const EVERY_CAPABILITY: SubagentCapabilities = {
  persona: true,
  toolFilter: true,
  depthLimit: true,
  agentOptions: true,
  outputSchema: true,
  maxSteps: true,
};

/**
 * A fresh child with every capability; continuable. `runner` places only this provider's children
 * (e.g. `queueRunner(...)`: on remote hosts, while the parent and other children stay local).
 */
export function spawnProvider(input: { name?: string; runner?: RunnerChoice } = {}): SubagentProvider {
  const options = parseConfig(spawnOptions, input, 'spawnProvider options');
  const { runner } = options;
  return {
    name: options.name ?? 'spawn',
    capabilities: { ...EVERY_CAPABILITY },
    inheritsParentContext: false,
    ...(runner === undefined ? {} : { runner }),
    start: (request, ctx) => ctx.createChild(runner === undefined ? { request } : { request, runner }),
    prepareContinuable: async () => (runner === undefined ? {} : { runner }),
  };
}

/**
 * A child seeded with the parent's completed turns. It keeps the parent's route unless
 * `allowRouteChange`, so the copied prefix stays cache-friendly for the model provider.
 */
export function forkProvider(input: { name?: string; allowRouteChange?: boolean } = {}): SubagentProvider {
  const options = parseConfig(forkOptions, input, 'forkProvider options');
  return {
    name: options.name ?? 'fork',
    capabilities: { ...EVERY_CAPABILITY, agentOptions: options.allowRouteChange === true },
    inheritsParentContext: true,
    start: async (request, ctx) => ctx.createChild({ request, seed: await ctx.completedTurns(request.parent) }),
    // The runtime passes its ProviderContext along with the continuable request (see ContinuablePrepareRequest).
    prepareContinuable: async (request) => ({
      seed: await (request as ContinuablePrepareRequest).context.completedTurns(request.parent),
    }),
  };
}

/** Spawn semantics with the driver on the main thread (baselines; no isolation). */
export function inlineProvider(input: { name?: string } = {}): SubagentProvider {
  const options = parseConfig(inlineOptions, input, 'inlineProvider options');
  return {
    name: options.name ?? 'inline',
    capabilities: { ...EVERY_CAPABILITY },
    inheritsParentContext: false,
    start: (request, ctx) => ctx.createChild({ request, runner: 'inline' }),
    prepareContinuable: async () => ({ runner: 'inline' }),
  };
}
