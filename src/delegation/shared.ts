/**
 * Small runtime accessors shared by the delegation plugins: the subagent runtime, the calling agent,
 * and reference-counted installs (job tools / message tools loaded both explicitly and by instances
 * must register once and leave when the last user leaves).
 */
import type { Brood } from '../brood.js';
import { makeDisposer, type Disposer } from '../disposer.js';
import { BroodError } from '../errors.js';
import { internalsOf, type BroodInternals } from '../internals.js';
import type { SubagentRuntime } from '../subagents/types.js';
import type { Agent, ToolContext } from '../types.js';

/** `brood.subagents`, read structurally so this folder does not depend on the Brood type's evolution. */
export function subagentsOf(brood: Brood): SubagentRuntime {
  const runtime = (brood as Brood & { subagents?: SubagentRuntime }).subagents;
  if (runtime === undefined) throw new BroodError('INTERNAL', 'this brood runtime has no subagent runtime');
  return runtime;
}

export function internals(brood: Brood): BroodInternals {
  return internalsOf(brood);
}

/** Delegation and job tools act on behalf of an agent; a host-level call has nobody to own the work. */
export function callingAgent(ctx: ToolContext, toolName: string): Agent {
  if (ctx.agent === undefined) {
    throw new BroodError('SCOPE_REQUIRED', `the ${toolName} tool must be called by an agent (agent.tools.execute or a model call)`);
  }
  return ctx.agent;
}

/** The agent's session decision for modelSelectionSettings (SPEC §11.9); false for foreign objects. */
export function modelSelectionEnabledFor(brood: Brood, agent: Agent | undefined): boolean {
  if (agent === undefined) return false;
  const impl = internals(brood).agentImpl(agent) as { modelSelectionEnabled?: unknown } | undefined;
  return impl?.modelSelectionEnabled === true;
}

/**
 * Installs `key` once per runtime: the first acquirer runs `install`, later ones only count. The
 * returned disposer releases one reference; the last release uninstalls. Failure of the first
 * install leaves no entry behind.
 */
export function acquireShared(brood: Brood, key: string, install: () => () => void): Disposer {
  const shared = internals(brood).shared;
  const existing = shared.get(key);
  if (existing !== undefined) {
    existing.count += 1;
  } else {
    const dispose = install();
    shared.set(key, { count: 1, dispose });
  }
  return makeDisposer(() => release(shared, key));
}

function release(shared: BroodInternals['shared'], key: string): void {
  const entry = shared.get(key);
  if (entry === undefined) return;
  entry.count -= 1;
  if (entry.count > 0) return;
  shared.delete(key);
  entry.dispose();
}
