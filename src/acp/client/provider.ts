/**
 * `acpProvider(options)`: children run by an external agent over the Agent Client Protocol. brood
 * cannot enforce persona, tool filters, depth, routes or schemas inside that agent, so it advertises
 * `false` for all of them and the gate refuses requests that need one; what it does own — the child's
 * session, depth and parent in the header, lifecycle events, cancellation, continuation — works as
 * for any child. One agent process per provider, sessions multiplexed on it.
 */

import {
  EXTERNAL_DRIVER,
  EXTERNAL_RESTORER,
  type ExternalDriver,
  type ExternalRestorer,
} from '../../subagents/external.js';
import type { CreateChildOptions, SubagentCapabilities, SubagentProvider } from '../../subagents/types.js';
import { requireOptionalPeers } from '../../util/optional-peers.js';
import { broodVersion } from '../../version.js';
import { AcpChild } from './child.js';
import { type AcpProviderOptions, resolveAcpOptions } from './options.js';
import { AgentPool } from './pool.js';

export interface AcpProvider extends SubagentProvider {
  /** Ends the agent process (also done by brood.close() and by disposing the registration). */
  dispose(): Promise<void>;
}

const CAPABILITIES: SubagentCapabilities = {
  persona: false,
  toolFilter: false,
  depthLimit: false,
  agentOptions: false,
  outputSchema: false,
  maxSteps: false,
};

export function acpProvider(options: AcpProviderOptions): AcpProvider {
  const resolved = resolveAcpOptions(options);
  // The SDK is imported when the first child starts; a missing one is reported here, at configuration.
  requireOptionalPeers('acpProvider', 'acp');
  const pool = new AgentPool(resolved, broodVersion());
  const external = (child: AcpChild): ExternalDriver => ({ runner: child, descriptor: child.descriptor() });
  const restorer: ExternalRestorer = {
    restoreDriver: (childId, descriptor) => {
      const acp = descriptor.acp as { sessionId?: unknown } | undefined;
      return AcpChild.restored(pool, resolved, childId, typeof acp?.sessionId === 'string' ? acp.sessionId : '');
    },
  };
  return {
    name: resolved.name,
    capabilities: { ...CAPABILITIES },
    // The agent never sees the parent's conversation: the task text is all it gets.
    inheritsParentContext: false,
    async start(request, ctx) {
      const child = await AcpChild.create(pool, resolved);
      try {
        const run = await ctx.createChild({ request, [EXTERNAL_DRIVER]: external(child) } as CreateChildOptions);
        let released = false;
        return {
          id: run.id,
          result: run.result,
          dispose: async () => {
            await run.dispose();
            if (!released) child.release();
            released = true;
          },
        };
      } catch (error) {
        child.release();
        throw error;
      }
    },
    async prepareContinuable() {
      const child = await AcpChild.create(pool, resolved);
      return { [EXTERNAL_DRIVER]: external(child) };
    },
    [EXTERNAL_RESTORER]: restorer,
    dispose: () => pool.dispose(),
  } as AcpProvider;
}
