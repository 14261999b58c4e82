/**
 * `brood mcp --config <file.json> [--http <port>] [--host <address>] …`: brood's delegation as an MCP
 * server, for any MCP client (desktop chat clients, IDEs, coding assistants). The config is the `brood
 * run` format: its models, tools, MCP servers and delegation entries make the runtime; `delegate` runs
 * children as its first `delegation` entry describes, under parents made with its `agent` settings.
 * stdio by default (stdout carries protocol only; logs go to stderr); `--http`: Streamable HTTP at
 * /mcp, bound to 127.0.0.1 unless `--host` says otherwise, with its Host/Origin checks and, with
 * `--auth-token-env`, a bearer token (required off loopback: a remote client could otherwise delegate).
 */
import { DEFAULTS } from '../defaults.js';
import { BroodError } from '../errors.js';
import { type BroodMcpServer, mcpServer, type SubagentToolConfig } from '../index.js';
import { isLoopbackHost, isOrigin } from '../mcp/server/http-guard.js';
import { requireOptionalPeers } from '../util/optional-peers.js';
import { commandHelp, type FlagValues, parseFlags, stringFlag, UsageError } from './cli-errors.js';
import { runtimeFromConfig } from './run.js';
import { loadRunConfig, type RunConfig } from './run-config.js';

export const MCP_USAGE =
  'brood mcp --config <file.json> [--http <port>] [--host <address>] [--auth-token-env <NAME>] …';

export const MCP_HELP = commandHelp(MCP_USAGE, [
  "Serves brood as an MCP server: the tool `delegate` runs a subagent as the config's first delegation",
  'entry describes (also as an MCP task: a background job), `list_models` when that entry enables model',
  'selection. The config is the `brood run` format. stdio by default (stdout carries protocol only, logs',
  `go to stderr); --http <port>: Streamable HTTP at ${DEFAULTS.mcpServer.httpPath} on ${DEFAULTS.mcpServer.httpHost} (--host to change).`,
  '--auth-token-env <NAME>: every HTTP request needs "Authorization: Bearer <token>", the token',
  'read from that environment variable (required when --host is not a loopback address). A request',
  'whose Host is not this server, or whose Origin is neither loopback nor an --allowed-origin',
  '<origin>, is refused (403); --allowed-host <name> adds a Host name (e.g. a LAN name when bound to',
  '0.0.0.0). Both repeat.',
]);

/** What `--http` is served with, besides the port. */
interface HttpAccess {
  host: string;
  token: string | undefined;
  allowedOrigins: string[];
  allowedHosts: string[];
}

export async function mcpCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(
    'mcp',
    args,
    {
      config: { type: 'string' },
      http: { type: 'string' },
      host: { type: 'string' },
      'auth-token-env': { type: 'string' },
      'allowed-origin': { type: 'string', multiple: true },
      'allowed-host': { type: 'string', multiple: true },
    },
    [],
  );
  const file = stringFlag(values, 'config');
  if (file === undefined) throw new UsageError('brood mcp: --config <file.json> is required (see brood --help)');
  const port = portOf(stringFlag(values, 'http'));
  const access = port === undefined ? undefined : httpAccess(values);
  if (port === undefined) refuseHttpOnlyFlags(values);
  requireOptionalPeers('brood mcp', 'mcp');
  // Anything printed to stdout would corrupt the stdio protocol stream.
  console.log = console.error;
  console.info = console.error;
  const config = await loadRunConfig(file).catch(relabel);
  refuseUnanswerableApprovals(config);
  const delegation = config.delegation[0];
  if (delegation === undefined) {
    throw new UsageError(
      `brood mcp: config ${file}: delegation: needs at least one entry (delegate runs children as the first describes)`,
    );
  }
  const brood = await runtimeFromConfig(config).catch(relabel);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const makeServer = (): BroodMcpServer =>
    mcpServer(brood, {
      delegation: delegation as unknown as SubagentToolConfig,
      agent: config.agent as RunConfig['agent'],
    });
  try {
    const why =
      port === undefined || access === undefined
        ? await serveStdio(makeServer())
        : await serveHttp(makeServer, port, access, log);
    log(`brood mcp: ${why}; exiting`);
  } finally {
    await brood.close();
  }
  return 0;
}

/** Serves until the client closes stdin or a signal arrives; closing the server cancels what it started. */
async function serveStdio(server: BroodMcpServer): Promise<string> {
  const { LineTransport } = await import('../mcp/server/stdio.js');
  const transport = new LineTransport(process.stdin, process.stdout);
  const ended = new Promise<string>((resolve) => {
    transport.onclose = () => resolve('the client closed stdin');
    process.once('SIGTERM', () => resolve('received SIGTERM'));
    process.once('SIGINT', () => resolve('received SIGINT'));
    // The client gone while brood writes (EPIPE): unheard, the 'error' would crash the process.
    process.stdout.on('error', (error: NodeJS.ErrnoException) =>
      resolve(`stdout failed (${error.code ?? error.message})`),
    );
  });
  await server.connect(transport);
  const why = await ended;
  await server.close();
  process.stdin.destroy();
  return why;
}

async function serveHttp(
  makeServer: () => BroodMcpServer,
  port: number,
  access: HttpAccess,
  log: (line: string) => void,
): Promise<string> {
  const { serveHttp: listen } = await import('../mcp/server/http.js');
  const serving = await listen({ ...access, port, makeServer, log }).catch((error: unknown) => {
    throw new UsageError(`brood mcp: cannot listen on ${access.host}:${port}: ${(error as Error).message}`);
  });
  if (access.token === undefined) {
    log('brood mcp: warning: no --auth-token-env: any local process (any user of this machine) can call delegate');
  }
  log(`brood mcp: serving MCP at ${serving.url}`);
  const why = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('received SIGTERM'));
    process.once('SIGINT', () => resolve('received SIGINT'));
  });
  await serving.close();
  return why;
}

/**
 * The --http flags. Bad values are usage errors (exit 2); a token that cannot be had — the flag
 * missing off loopback, or its variable unset — is a refusal to serve (INVALID_CONFIG, exit 1).
 */
function httpAccess(values: FlagValues): HttpAccess {
  const host = stringFlag(values, 'host') ?? DEFAULTS.mcpServer.httpHost;
  const allowedOrigins = listFlag(values, 'allowed-origin');
  for (const origin of allowedOrigins) {
    if (!isOrigin(origin)) {
      throw new UsageError(`brood mcp: --allowed-origin: '${origin}' is not an origin (http(s)://host[:port])`);
    }
  }
  const allowedHosts = listFlag(values, 'allowed-host');
  for (const name of allowedHosts) {
    if (!/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/.test(name)) {
      throw new UsageError(`brood mcp: --allowed-host: '${name}' is not a host name (no port; IPv6 in brackets)`);
    }
  }
  const variable = stringFlag(values, 'auth-token-env');
  if (variable === undefined && !isLoopbackHost(host)) {
    throw new BroodError(
      'INVALID_CONFIG',
      `mcp: --host ${host} is not a loopback address: --auth-token-env <NAME> is required ` +
        '(the token every client must send as "Authorization: Bearer <token>")',
    );
  }
  const token = variable === undefined ? undefined : process.env[variable];
  if (variable !== undefined && (token === undefined || token === '')) {
    throw new BroodError('INVALID_CONFIG', `mcp: --auth-token-env ${variable}: that environment variable is not set`);
  }
  return { host, token, allowedOrigins, allowedHosts };
}

function refuseHttpOnlyFlags(values: FlagValues): void {
  for (const flag of ['host', 'auth-token-env', 'allowed-origin', 'allowed-host']) {
    if (values[flag] !== undefined) throw new UsageError(`brood mcp: --${flag} needs --http <port>`);
  }
}

function listFlag(values: FlagValues, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function portOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535)
    throw new UsageError(`brood mcp: --http: '${text}' is not a port (0-65535)`);
  return port;
}

/**
 * A call that asks for approval waits for the host to answer (up to `approvals.timeoutMs`, a day by
 * default), and `brood mcp` has no one to ask: its only party is the MCP client, which is not trusted
 * to approve anything. So a config that makes calls ask is refused before anything starts.
 */
function refuseUnanswerableApprovals(config: RunConfig): void {
  const ask = config.approvals?.ask ?? [];
  if (ask.length === 0) return;
  throw new BroodError(
    'INVALID_CONFIG',
    `mcp: config ${config.file}: approvals.ask: brood mcp cannot ask anyone to approve a call ` +
      `(${ask.join(', ')}); remove approvals.ask, or serve with brood acp, whose client answers approvals`,
  );
}

/** Config problems come from the shared `brood run` loader; say which command reported them. */
function relabel(error: unknown): never {
  if (error instanceof UsageError) throw new UsageError(error.message.replace(/^brood run:/, 'brood mcp:'));
  throw error;
}
