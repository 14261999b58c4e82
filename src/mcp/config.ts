/** mcpTools' server and option shapes, validated at use() (INVALID_CONFIG names the key). */
import { z } from 'zod';
import { parseConfig } from '../config.js';
import { DEFAULTS } from '../defaults.js';
import type { Agent } from '../types.js';
import { readUntrusted } from '../util/untrusted.js';

/** Server names become part of tool names, so they use the tool-name alphabet and leave room for the tool. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;

const nonEmpty = z.string().min(1, 'must be a non-empty string');
const serverName = z
  .string()
  .regex(SERVER_NAME_PATTERN, 'letters, digits, _ and - (1 to 40 characters)')
  // `mcp__<server>__<tool>` must stay unambiguous: the server part cannot contain the separator.
  .refine((name) => !name.includes('__'), 'must not contain "__" (it separates server and tool in tool names)');
const stringMap = z.record(z.string(), z.string());

export const stdioServerSchema = z.strictObject({
  name: serverName,
  command: nonEmpty,
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  cwd: nonEmpty.optional(),
});

export const httpServerSchema = z.strictObject({
  name: serverName,
  url: z.string().refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'must be an http(s) URL'),
  headers: stringMap.optional(),
});

export type McpStdioServer = z.infer<typeof stdioServerSchema>;
export type McpHttpServer = z.infer<typeof httpServerSchema>;
export type McpServer = McpStdioServer | McpHttpServer;

const isAgentLike = (value: unknown): value is Agent =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Agent).id === 'string' &&
  typeof (value as Agent).tools === 'object';

/** What the host may learn about a connection (tests synchronise on it; UIs can show it). */
export type McpServerStatus =
  | { state: 'connected'; tools: number }
  | { state: 'down'; error: string; retryInMs: number | undefined };

/** mcpTools' options (also `brood run`'s per-server options, less the ones JSON cannot carry). */
export const mcpToolsOptionsSchema = z.strictObject({
  scope: z.union([z.literal('global'), z.custom<Agent>(isAgentLike, "'global' or an Agent")]).optional(),
  include: z.array(nonEmpty).optional(),
  exclude: z.array(nonEmpty).optional(),
  timeoutMs: z.number().int().positive().max(2_147_483_647).optional(),
  concurrencySafe: z.union([z.boolean(), z.array(nonEmpty)]).optional(),
  onStatus: z
    .custom<(status: McpServerStatus) => void>((value) => typeof value === 'function', 'a function')
    .optional(),
  untrustedSchemas: z.boolean().optional(),
});

export interface McpToolsOptions {
  /** Where the tools are registered: the global layer (default) or one agent's own layer. */
  scope?: 'global' | Agent;
  /** Server tool names (or full `mcp__…` names) to register; default all. */
  include?: string[];
  /** Server tool names (or full `mcp__…` names) never to register. */
  exclude?: string[];
  /** Per call, and for the connection handshake; default 60 s. */
  timeoutMs?: number;
  /** `true`: tools the server annotates `readOnlyHint` may run in parallel; a list: exactly these tools. */
  concurrencySafe?: boolean | string[];
  /** Called when the connection comes up or goes down (after the first connection). */
  onStatus?: (status: McpServerStatus) => void;
  /**
   * `true` for a server someone other than the host named (an ACP client's): a tool schema holding a
   * regular expression (`pattern`, `patternProperties`, `format`) is shown to the model as it is but
   * never compiled in this process; the server validates those calls. Default `false`.
   */
  untrustedSchemas?: boolean;
}

export interface ParsedMcpConfig {
  server: McpServer;
  scope: 'global' | Agent;
  include: ReadonlySet<string> | undefined;
  exclude: ReadonlySet<string>;
  timeoutMs: number;
  concurrencySafe: boolean | ReadonlySet<string>;
  onStatus: ((status: McpServerStatus) => void) | undefined;
  untrustedSchemas: boolean;
}

export function parseMcpConfig(server: unknown, options: unknown): ParsedMcpConfig {
  const parsedServer = parseServer(server);
  const parsed = parseConfig(mcpToolsOptionsSchema, options, `mcpTools options for server "${parsedServer.name}"`);
  const safe = parsed.concurrencySafe ?? false;
  return {
    server: parsedServer,
    scope: parsed.scope ?? 'global',
    include: parsed.include === undefined ? undefined : new Set(parsed.include),
    exclude: new Set(parsed.exclude ?? []),
    timeoutMs: parsed.timeoutMs ?? DEFAULTS.mcpTimeoutMs,
    concurrencySafe: typeof safe === 'boolean' ? safe : new Set(safe),
    onStatus: parsed.onStatus,
    untrustedSchemas: parsed.untrustedSchemas ?? false,
  };
}

/** The two transports have disjoint keys, so the key present picks the schema (and its messages). */
function parseServer(server: unknown): McpServer {
  const record = typeof server === 'object' && server !== null ? (server as Record<string, unknown>) : {};
  const transport = readUntrusted('INVALID_CONFIG', 'MCP server', () =>
    'command' in record ? 'stdio' : 'url' in record ? 'http' : undefined,
  );
  if (transport === 'stdio') return parseConfig(stdioServerSchema, server, 'MCP server (stdio)');
  if (transport === 'http') return parseConfig(httpServerSchema, server, 'MCP server (Streamable HTTP)');
  return parseConfig(
    z.custom<never>(
      () => false,
      'an MCP server needs { name, command, args?, env?, cwd? } (stdio) or { name, url, headers? } (Streamable HTTP)',
    ),
    server,
    'MCP server',
  );
}

export function isStdioServer(server: McpServer): server is McpStdioServer {
  return 'command' in server;
}

/** How messages name the server: its name and what brood starts or calls. */
export function describeServer(server: McpServer): string {
  return isStdioServer(server)
    ? `MCP server "${server.name}" (${[server.command, ...(server.args ?? [])].join(' ')})`
    : `MCP server "${server.name}" (${server.url})`;
}
