/**
 * `brood mcp --http`: Streamable HTTP at one path, one SDK transport and one mcpServer per MCP session
 * (made on initialize). Bodies are read here with a size cap, so an oversized request is refused
 * (413 with a JSON-RPC error) and a body that is not JSON gets −32700, before the SDK sees it. A
 * session that ends (DELETE, or its stream closing) cancels its synchronous calls; its tasks run on
 * until the server closes.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULTS } from '../../defaults.js';
import type { BroodMcpServer } from './index.js';

export interface HttpServeOptions {
  host: string;
  port: number;
  /** A new mcpServer for each MCP session. */
  makeServer: () => BroodMcpServer;
  maxRequestBytes?: number;
  log: (line: string) => void;
}

export interface HttpServing {
  url: string;
  close(): Promise<void>;
}

const PATH = DEFAULTS.mcpServer.httpPath;

export async function serveHttp(options: HttpServeOptions): Promise<HttpServing> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<BroodMcpServer>();
  const maxBytes = options.maxRequestBytes ?? DEFAULTS.mcpServer.maxRequestBytes;
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.log(`brood mcp: request failed: ${(error as Error).message}`);
      if (!res.headersSent) reply(res, 500, null, -32603, 'Internal error');
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== PATH) {
      res.writeHead(404).end();
      return;
    }
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (req.method !== 'POST') {
      if (existing === undefined) return reply(res, 400, null, -32000, 'Bad request: no valid session id');
      return existing.handleRequest(req, res);
    }
    const body = await readBody(req, maxBytes);
    if (body.kind === 'oversized') {
      return reply(res, 413, null, -32600, `Invalid request: a body over the ${maxBytes}-byte limit`);
    }
    let json: unknown;
    try {
      json = JSON.parse(body.text);
    } catch (error) {
      return reply(res, 400, null, -32700, `Parse error: ${(error as Error).message}`);
    }
    if (existing !== undefined) return existing.handleRequest(req, res, json);
    if (sessionId !== undefined || !isInitializeRequest(json)) {
      return reply(res, 400, null, -32000, 'Bad request: no valid session id');
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    const server = options.makeServer();
    servers.add(server);
    await server.connect(transport);
    await transport.handleRequest(req, res, json);
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}${PATH}`,
    async close() {
      await Promise.allSettled([...servers].map((server) => server.close()));
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

function reply(res: ServerResponse, status: number, id: null, code: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
}

function closeHttp(http: Server): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
