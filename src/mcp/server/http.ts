/**
 * `brood mcp --http`: Streamable HTTP at one path, one SDK transport and one mcpServer per MCP session
 * (made on initialize). Every request is first checked by the guard (Host, Origin, bearer token:
 * http-guard.ts), before its path or body is read. Bodies are read here with a size cap, so an
 * oversized request is refused (413 with a JSON-RPC error) and a body that is not JSON gets −32700,
 * before the SDK sees it. Sessions live in a table (http-sessions.ts) that ends them on DELETE, on
 * their transport's close and after an idle time, and holds at most `maxSessions`; a session's end
 * closes its mcpServer, which cancels its calls and tasks.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULTS } from '../../defaults.js';
import { type HttpGuard, httpGuard } from './http-guard.js';
import { type HttpSession, HttpSessions, type IdleTimer, REAL_IDLE_TIMER } from './http-sessions.js';
import type { BroodMcpServer } from './index.js';

export interface HttpServeOptions {
  host: string;
  port: number;
  /** A new mcpServer for each MCP session. */
  makeServer: () => BroodMcpServer;
  maxRequestBytes?: number;
  /** Sessions alive at once; an initialize past it is refused with 503. */
  maxSessions?: number;
  /** A session with no request open for this long is closed. */
  sessionIdleMs?: number;
  /** The idle timer (tests fire it by hand). */
  idleTimer?: IdleTimer;
  /** Every request must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** Host names (no port) accepted in `Host` besides the bound address and loopback names. */
  allowedHosts?: readonly string[];
  /** Origins accepted besides loopback ones. */
  allowedOrigins?: readonly string[];
  log: (line: string) => void;
}

export interface HttpServing {
  url: string;
  /** Sessions in the server's table (those being initialized included). */
  sessionCount(): number;
  close(): Promise<void>;
}

const PATH = DEFAULTS.mcpServer.httpPath;

export async function serveHttp(options: HttpServeOptions): Promise<HttpServing> {
  const sessions = new HttpSessions({
    max: options.maxSessions ?? DEFAULTS.mcpServer.maxSessions,
    idleMs: options.sessionIdleMs ?? DEFAULTS.mcpServer.sessionIdleMs,
    timer: options.idleTimer ?? REAL_IDLE_TIMER,
    log: options.log,
  });
  const maxBytes = options.maxRequestBytes ?? DEFAULTS.mcpServer.maxRequestBytes;
  // Set once the port is known (it may be 0 until listen picks one); no request arrives before that.
  let guard: HttpGuard = () => ({ status: 403, message: 'Forbidden: not listening yet' });
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.log(`brood mcp: request failed: ${(error as Error).message}`);
      if (!res.headersSent) reply(res, 500, -32603, 'Internal error');
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = guard(req);
    if (refusal !== undefined) {
      req.resume(); // the body is not read; let it drain so the connection can answer
      return reply(res, refusal.status, -32000, refusal.message, refusal.headers);
    }
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== PATH) {
      res.writeHead(404).end();
      return;
    }
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    // Held from here, so the idle timer cannot close it while its body is read.
    if (existing !== undefined) hold(existing, res);
    if (req.method !== 'POST') {
      if (existing === undefined) return reply(res, 400, -32000, 'Bad request: no valid session id');
      return existing.transport.handleRequest(req, res);
    }
    const body = await readBody(req, maxBytes);
    if (body.kind === 'oversized') {
      return reply(res, 413, -32600, `Invalid request: a body over the ${maxBytes}-byte limit`);
    }
    let json: unknown;
    try {
      json = JSON.parse(body.text);
    } catch (error) {
      return reply(res, 400, -32700, `Parse error: ${(error as Error).message}`);
    }
    if (existing !== undefined) return existing.transport.handleRequest(req, res, json);
    if (sessionId !== undefined || !isInitializeRequest(json)) {
      return reply(res, 400, -32000, 'Bad request: no valid session id');
    }
    if (sessions.full) return reply(res, 503, -32000, 'Server busy: too many MCP sessions; try again later');
    await initialize(req, res, json);
  }

  /** A new session: its transport and server, in the table from the start so the cap counts it. */
  async function initialize(req: IncomingMessage, res: ServerResponse, json: unknown): Promise<void> {
    let session: HttpSession | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        if (session !== undefined) sessions.named(session, id);
      },
    });
    // Set before connect: the SDK server chains its own close handler after this one.
    transport.onclose = () => {
      if (session !== undefined) void sessions.close(session);
    };
    const server = options.makeServer();
    session = sessions.open(transport, server);
    const opened = session;
    try {
      await server.connect(transport);
      hold(opened, res);
      await transport.handleRequest(req, res, json);
    } finally {
      // An initialize that failed or that the transport refused leaves a session without an id: nothing can reach it.
      if (transport.sessionId === undefined) await sessions.close(opened);
    }
  }

  /** A request of `session` is under way: the session is not idle until its response has ended. */
  function hold(session: HttpSession, res: ServerResponse): void {
    sessions.begin(session);
    res.once('close', () => sessions.end(session));
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  guard = httpGuard({
    host: options.host,
    port,
    ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
    ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
    ...(options.token === undefined ? {} : { token: options.token }),
  });
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}${PATH}`,
    sessionCount: () => sessions.size,
    async close() {
      await sessions.closeAll();
      await closeHttp(http);
    },
  };
}

type Body = { kind: 'body'; text: string } | { kind: 'oversized' };

/** Reads a request body up to `maxBytes`; past that the rest is drained, not kept. */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Body> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let length = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > maxBytes) over = true;
      else parts.push(chunk);
    });
    req.on('end', () =>
      resolve(over ? { kind: 'oversized' } : { kind: 'body', text: Buffer.concat(parts).toString('utf8') }),
    );
    req.on('error', reject);
  });
}

function reply(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res
    .writeHead(status, { ...headers, 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

function closeHttp(http: Server): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
