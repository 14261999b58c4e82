/**
 * A Streamable HTTP MCP server built with the official SDK for the HTTP suite, on a loopback port:
 * stateful sessions (unknown session ids get 404, as the spec says), a tool list the test edits
 * live (list_changed is sent to every session), and hooks that tell the test when a session's event
 * stream is open and when a call started or was cancelled. `legacySse` serves the old HTTP+SSE
 * transport instead (a 405 to POST on the endpoint, as old servers answer).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

export interface FixtureTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[] };
}

type Waiter = (value: string) => void;

export class TestMcpHttpServer {
  tools: FixtureTool[] = [
    {
      name: 'echo',
      description: 'echoes text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    { name: 'slow', description: 'answers only when cancelled', inputSchema: { type: 'object', properties: {} } },
    { name: 'broken', description: 'fails at the protocol level', inputSchema: { type: 'object', properties: {} } },
  ];
  /** Request headers of each initialize request. */
  readonly initHeaders: IncomingMessage['headers'][] = [];
  private readonly sessions = new Map<
    string,
    { server: Server; transport: StreamableHTTPServerTransport | SSEServerTransport }
  >();
  private readonly waiters = new Map<string, Waiter[]>();
  /** Events nobody waited for yet, so a test can ask after the fact. */
  private readonly backlog = new Map<string, string[]>();
  private http: HttpServer | undefined;
  port = 0;

  constructor(
    readonly instance: string,
    private readonly mode: 'streamable' | 'legacySse' = 'streamable',
  ) {}

  /** Sessions the server still holds (a client's DELETE ends one). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/${this.mode === 'legacySse' ? 'sse' : 'mcp'}`;
  }

  /** Resolves with the detail of the oldest unconsumed `event` ('stream-open', 'call:<tool>', 'cancelled:<tool>'). */
  next(event: string): Promise<string> {
    const queued = this.backlog.get(event)?.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve) => {
      const list = this.waiters.get(event) ?? [];
      list.push(resolve);
      this.waiters.set(event, list);
    });
  }

  async start(port = 0): Promise<void> {
    this.http = createServer((req, res) => {
      this.route(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => this.http!.listen(port, '127.0.0.1', resolve));
    this.port = (this.http.address() as AddressInfo).port;
  }

  /** Stops abruptly, like a crashed server: open streams are cut, sessions forgotten. */
  async stop(): Promise<void> {
    const http = this.http;
    this.http = undefined;
    if (http === undefined) return;
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeAllConnections();
    await closed;
    for (const { server } of this.sessions.values()) await server.close().catch(() => undefined);
    this.sessions.clear();
  }

  /** Forgets every session (closing their streams), as a restarted server would have. */
  async forgetSessions(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    for (const { server } of sessions) await server.close().catch(() => undefined);
  }

  /** Tells every connected session that the tool list changed. */
  async listChanged(): Promise<void> {
    for (const { server } of this.sessions.values()) await server.sendToolListChanged();
  }

  private emit(event: string, detail: string): void {
    const waiter = this.waiters.get(event)?.shift();
    if (waiter !== undefined) {
      waiter(detail);
      return;
    }
    const queue = this.backlog.get(event) ?? [];
    queue.push(detail);
    this.backlog.set(event, queue);
  }

  private makeServer(): Server {
    const server = new Server(
      { name: `test-${this.instance}`, version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const name = request.params.name;
      this.emit(`call:${name}`, name);
      if (name === 'broken') throw new McpError(ErrorCode.InternalError, 'the broken tool broke');
      if (name === 'slow') {
        await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve(), { once: true }));
        this.emit(`cancelled:${name}`, String(extra.signal.reason ?? ''));
        return { content: [{ type: 'text', text: 'too late' }] };
      }
      const args = request.params.arguments ?? {};
      return { content: [{ type: 'text', text: `${this.instance}:${name}:${String(args.text ?? '')}` }] };
    });
    return server;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.mode === 'legacySse') return this.routeLegacy(req, res);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (session === undefined) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      if (req.method === 'GET') this.emit('stream-open', sessionId);
      await (session.transport as StreamableHTTPServerTransport).handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(400).end();
      return;
    }
    this.initHeaders.push(req.headers);
    const server = this.makeServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, { server, transport }),
    });
    // Set before connect(): the SDK chains its own close handling after this one.
    transport.onclose = () => {
      if (transport.sessionId !== undefined && this.sessions.get(transport.sessionId)?.transport === transport)
        this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  private async routeLegacy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/sse') {
      this.initHeaders.push(req.headers);
      const transport = new SSEServerTransport('/messages', res);
      const server = this.makeServer();
      this.sessions.set(transport.sessionId, { server, transport });
      await server.connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const session = this.sessions.get(url.searchParams.get('sessionId') ?? '');
      if (session === undefined) {
        res.writeHead(404).end();
        return;
      }
      await (session.transport as SSEServerTransport).handlePostMessage(req, res);
      return;
    }
    res.writeHead(405).end();
  }
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  await new Promise<void>((resolve) => http.close(() => resolve()));
  return port;
}

/** A server that answers every request with HTTP 500. */
export async function failingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer((_req, res) => res.writeHead(500).end('nope'));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((resolve) => http.close(() => resolve())) };
}
