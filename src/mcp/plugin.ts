/**
 * mcpTools(server, options?): a BroodPlugin that connects to one MCP server (spawned over stdio, or
 * Streamable HTTP with the SDK's SSE fallback) and feeds its tools into the runtime's registry as
 * `mcp__<server>__<tool>`. `use()` resolves once the client connected and listed the tools; the
 * disposer (and brood.close()) removes the tools, closes the client and ends the server process.
 */
import type { Brood, BroodPlugin } from '../brood.js';
import { type Clock, systemClock } from '../clock.js';
import { BroodError } from '../errors.js';
import { type AsyncDisposer, makeAsyncDisposer } from '../runtime/async-plugins.js';
import { pluginAccess } from '../runtime/plugin-access.js';
import type { ToolRegistry } from '../types.js';
import { requireOptionalPeers } from '../util/optional-peers.js';
import { readUntrusted } from '../util/untrusted.js';
import { type McpServer, type McpToolsOptions, type ParsedMcpConfig, parseMcpConfig } from './config.js';
import { McpToolSet } from './tool-set.js';

export function mcpTools(server: McpServer, options: McpToolsOptions = {}): BroodPlugin<Promise<AsyncDisposer>> {
  return mcpToolsOnClock(server, options, systemClock);
}

/**
 * mcpTools waiting on the given clock: the restart backoff (restart-policy.ts) and a stdio server's
 * exit grace (stdio-transport.ts). For process tests only, not exported by the package: they inject
 * a faster clock (a wait of `ms` lasts less), so the restart schedule and the shutdown sequence play
 * out in milliseconds against a real server process; what the connection reports (`retryInMs`) is
 * still the policy's own figure.
 */
export function mcpToolsOnClock(
  server: McpServer,
  options: McpToolsOptions,
  clock: Clock,
): BroodPlugin<Promise<AsyncDisposer>> {
  const label = readUntrusted('INVALID_CONFIG', 'MCP server', () => {
    const name = (server as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' ? name : '?';
  });
  return { name: `mcp:${label}`, install: (brood) => install(brood, server, options, clock) };
}

async function install(brood: Brood, server: unknown, options: unknown, clock: Clock): Promise<AsyncDisposer> {
  const config = parseMcpConfig(server, options);
  const registry = registryFor(brood, config);
  // Lazy: the SDK (an optional peer) is loaded only by hosts that connect to an MCP server.
  requireOptionalPeers('mcpTools', 'mcp');
  const { McpConnection } = await import('./connection.js');
  let tools: McpToolSet | undefined;
  const connection = new McpConnection(
    config.server,
    config.timeoutMs,
    {
      tools: (list) => tools?.sync(list),
      ...(config.onStatus === undefined ? {} : { status: config.onStatus }),
    },
    clock,
  );
  const first = await connection.open();
  const set = new McpToolSet(registry, config, (name, args, signal) => connection.callTool(name, args, signal));
  try {
    set.sync(first, true);
  } catch (error) {
    await connection.close();
    throw error;
  }
  tools = set;
  connection.goLive();
  return makeAsyncDisposer(async () => {
    set.dispose();
    await connection.close();
  });
}

function registryFor(brood: Brood, config: ParsedMcpConfig): ToolRegistry {
  if (config.scope === 'global') return brood.tools;
  const agent = pluginAccess(brood).agentImpl(config.scope);
  if (agent === undefined || agent.isDisposed) {
    throw new BroodError(
      'INVALID_CONFIG',
      `mcpTools "${config.server.name}": scope must be 'global' or a live agent of this brood runtime`,
    );
  }
  return config.scope.tools;
}
