/**
 * Access to runtime internals for brood's own plugins (the delegation tool, job and message tools).
 * Keyed by a module-private symbol so host code cannot reach it by accident; not part of the public API.
 */
import type { AgentImpl } from './agents/agent.js';
import type { RuntimeCore } from './agents/runtime-core.js';
import type { Disposer } from './disposer.js';
import type { SubagentProvider, JobTable } from './subagents/types.js';
import type { Agent } from './types.js';

export const INTERNALS: unique symbol = Symbol('brood.internals');

/** Synchronous hooks run inside `subagents.register()` and its disposer; `added` throwing vetoes the registration. */
export interface MountHook {
  added(provider: SubagentProvider): void;
  removed(provider: SubagentProvider): void;
}

export interface BroodInternals {
  core: RuntimeCore;
  jobs: JobTable;
  /** Resolves a public Agent to the runtime's own object (undefined for foreign objects). */
  agentImpl(agent: Agent | undefined): AgentImpl | undefined;
  /** Mount hooks see the providers registered so far immediately (replayed through `added`). */
  addMountHook(hook: MountHook): Disposer;
  /** Plugin-wide reservations (tool names of loaded delegation instances, the one list_subagent_models owner). */
  reservations: Map<string, string>;
  /** Reference-counted shared installs (jobTools / messageTools installed by several instances). */
  shared: Map<string, { count: number; dispose: () => void }>;
}

export function internalsOf(brood: object): BroodInternals {
  const internals = (brood as { [INTERNALS]?: BroodInternals })[INTERNALS];
  if (!internals) throw new Error('not a brood runtime');
  return internals;
}
