/**
 * The MCP servers an ACP client sends with `session/new` / `session/load`, mounted with the MCP plugin
 * on that session's agent only (its own tool layer: `mcp__<server>__<tool>`), and unmounted with the
 * session. ACP's name/value lists become the plugin's maps; names are fitted to its server-name
 * alphabet. A server that cannot be reached fails the session request (nothing stays mounted).
 */
import type * as Acp from '@agentclientprotocol/sdk';
import type { Brood } from '../../brood.js';
import type { McpServer } from '../../mcp/config.js';
import { mcpTools } from '../../mcp/plugin.js';
import type { Agent } from '../../types.js';

export type Unmount = () => Promise<void>;

export async function mountClientMcpServers(brood: Brood, agent: Agent, servers: Acp.McpServer[]): Promise<Unmount[]> {
  const mounted: Unmount[] = [];
  try {
    for (const [index, server] of servers.entries()) {
      const dispose = await brood.use(mcpTools(pluginServer(server, index), { scope: agent, untrustedSchemas: true }));
      mounted.push(async () => void (await dispose()));
    }
  } catch (error) {
    await unmountAll(mounted);
    throw error;
  }
  return mounted;
}

export async function unmountAll(unmounts: Unmount[]): Promise<void> {
  await Promise.all(unmounts.map((unmount) => unmount().catch(() => undefined)));
}

function pluginServer(server: Acp.McpServer, index: number): McpServer {
  const name = serverName(server.name, index);
  const pairs = (list: { name: string; value: string }[] | undefined): Record<string, string> =>
    Object.fromEntries((list ?? []).map(({ name: key, value }) => [key, value]));
  // http and sse both reach the plugin's HTTP transport (Streamable HTTP, falling back to SSE).
  if ('type' in server && (server.type === 'http' || server.type === 'sse'))
    return { name, url: server.url, headers: pairs(server.headers) };
  const stdio = server as Acp.McpServerStdio;
  return { name, command: stdio.command, args: stdio.args, env: pairs(stdio.env) };
}

/** `[A-Za-z0-9_-]{1,40}` without `__` (the plugin's rule); an unusable name becomes `mcp<index>`. */
function serverName(raw: string, index: number): string {
  const fitted = raw
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .replace(/_{2,}/g, '_')
    .slice(0, 40);
  return /[A-Za-z0-9]/.test(fitted) ? fitted : `mcp${index}`;
}
