/**
 * The built-in providers (SPEC §9). Each is plain data plus a start function on top of
 * ProviderContext.createChild, exactly what a third-party in-process provider would write.
 */
import type { RunnerChoice } from '../queue/config.js';
import type { ContinuablePrepareRequest, SubagentCapabilities, SubagentProvider } from './types.js';

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
export function spawnProvider(options: { name?: string; runner?: RunnerChoice } = {}): SubagentProvider {
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
export function forkProvider(options: { name?: string; allowRouteChange?: boolean } = {}): SubagentProvider {
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
export function inlineProvider(options: { name?: string } = {}): SubagentProvider {
  return {
    name: options.name ?? 'inline',
    capabilities: { ...EVERY_CAPABILITY },
    inheritsParentContext: false,
    start: (request, ctx) => ctx.createChild({ request, runner: 'inline' }),
    prepareContinuable: async () => ({ runner: 'inline' }),
  };
}
