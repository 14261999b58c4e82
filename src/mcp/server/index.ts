/**
 * mcpServer(brood, options): brood's delegation served as MCP tools — `delegate` (also as an
 * MCP task, which is a background job of the runtime) and `list_models` when the delegation allows
 * model selection. The SDK is an optional peer: it is probed here and imported on connect().
 */
import type { Brood } from '../../brood.js';
import { requireOptionalPeers } from '../../util/optional-peers.js';
import { ServedDelegations } from './delegations.js';
import { type McpServerOptions, parseMcpServerOptions } from './options.js';

/** An SDK server transport (StdioServerTransport, StreamableHTTPServerTransport, InMemoryTransport…). */
export interface McpServerTransport {
  start(): Promise<void>;
  send(message: unknown, options?: unknown): Promise<void>;
  close(): Promise<void>;
}

export interface BroodMcpServer {
  /** Serves one client over `transport` (one transport per server: make a server per connection). */
  connect(transport: McpServerTransport): Promise<void>;
  /** Cancels every call and task this server started and closes the transport. */
  close(): Promise<void>;
}

export function mcpServer(brood: Brood, options: McpServerOptions): BroodMcpServer {
  const resolved = parseMcpServerOptions(options);
  requireOptionalPeers('mcpServer', 'mcp');
  const delegations = new ServedDelegations(brood, resolved);
  let closeSdk: (() => Promise<void>) | undefined;
  return {
    async connect(transport) {
      const { createSdkServer } = await import('./serve.js');
      const server = createSdkServer({ brood, name: resolved.name, delegations });
      // A client gone ends its synchronous calls; its tasks run on until close().
      server.onclose = () => delegations.abortCalls();
      closeSdk = () => server.close();
      await server.connect(transport as Parameters<typeof server.connect>[0]);
    },
    async close() {
      await delegations.close();
      await closeSdk?.();
    },
  };
}

export type { McpServerOptions } from './options.js';
