/**
 * Small runtime accessors shared by the delegation plugins: the subagent runtime, the calling agent,
 * and reference-counted installs (job tools / message tools loaded both explicitly and by instances
 * must register once and leave when the last user leaves).
 */
import type { Brood } from '../brood.js';
import { BroodError } from '../errors.js';
import { pluginAccess } from '../runtime/plugin-access.js';
import type { SubagentRuntime } from '../subagents/types.js';
import type { Agent, ToolContext } from '../types.js';
import type { Disposer } from '../util/disposer.js';

/** `brood.subagents`, read structurally so this folder does not depend on the Brood type's evolution. */
export function subagentsOf(brood: Brood): SubagentRuntime {
  const runtime = (brood as Brood & { subagents?: SubagentRuntime }).subagents;
  if (runtime === undefined) throw new BroodError('INTERNAL', 'this brood runtime has no subagent runtime');
  return runtime;
}

/** Delegation and job tools act on behalf of an agent; a host-level call has nobody to own the work. */
export function callingAgent(ctx: ToolContext, toolName: string): Agent {
  if (ctx.agent === undefined) {
    throw new BroodError(
      'SCOPE_REQUIRED',
      `the ${toolName} tool must be called by an agent (agent.tools.execute or a model call)`,
    );
  }
  return ctx.agent;
}

/** The agent's session decision for modelSelectionSettings (SPEC §11.9); false for foreign objects. */
export function modelSelectionEnabledFor(brood: Brood, agent: Agent | undefined): boolean {
  if (agent === undefined) return false;
  const impl = pluginAccess(brood).agentImpl(agent) as { modelSelectionEnabled?: unknown } | undefined;
  return impl?.modelSelectionEnabled === true;
}

/** Installs `key` once per runtime, reference-counted (see PluginAccess.acquireShared). */
export function acquireShared(brood: Brood, key: string, install: () => () => void): Disposer {
  return pluginAccess(brood).acquireShared(key, install);
}
