/**
 * `brood mcp --http`'s server (serveHttp) on real loopback HTTP with the official SDK client and raw
 * requests: who may talk to it (Host, Origin, bearer token — on every request, not only initialize),
 * and the session table (DELETE, idle expiry with a hand-fired timer, the session cap). Sessions are
 * counted in the server's own table, and each session's mcpServer is watched for close().
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodMcpServer } from '../../../src/index.js';
import { createBrood, mcpServer, scriptedModels } from '../../../src/index.js';
import { type HttpServeOptions, type HttpServing, serveHttp } from '../../../src/mcp/server/http.js';
import { route } from '../../support/route.js';
import { until } from '../../support/until.js';

let brood: Brood | undefined;
let serving: HttpServing | undefined;
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await serving?.close();
  await brood?.close();
  serving = brood = undefined;
});

/** Servers made for sessions, and how many of them were closed. */
const made = { servers: 0, closed: 0 };

/** Idle timers the server armed and not yet cancelled; a test fires them by hand. */
const idle: { fire: () => void; cancelled: boolean }[] = [];
const pendingIdle = () => idle.filter((timer) => !timer.cancelled);

async function serve(options: Partial<HttpServeOptions> = {}): Promise<string> {
  made.servers = made.closed = 0;
  idle.length = 0;
  brood = createBrood({
    runner: 'worker',
    pool: { threads: 1 },
    models: [
      scriptedModels({
        id: 'scripted',
        models: ['scripted'],
        scripts: [
          { match: 'say hello', turns: [{ text: 'hello' }] },
          { match: 'slow work', latencyMs: 60_000, turns: [{ text: 'never' }] },
        ],
      }),
    ],
  });
  const makeServer = (): BroodMcpServer => {
    const server = mcpServer(brood!, { delegation: { provider: 'spawn' }, agent: { model: route } });
    made.servers += 1;
    return {
      connect: (transport) => server.connect(transport),
      close: async () => {
        made.closed += 1;
        await server.close();
      },
    };
  };
  serving = await serveHttp({
    host: '127.0.0.1',
    port: 0,
    makeServer,
    log: () => undefined,
    idleTimer: (fire) => {
      const timer = { fire, cancelled: false };
      idle.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
    ...options,
  });
  return serving.url;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  clients.push(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A raw POST of `initialize` with the headers given (Host included: fetch would not let a test set it). */
function rawInitialize(url: string, headers: Record<string, string>): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          host: target.host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(INITIALIZE);
  });
}

describe('who may talk to it', () => {
  it('refuses a Host that is not this server and an Origin that is not loopback or allowed (403), making no session', async () => {
    const url = await serve({ allowedOrigins: ['https://app.example'] });
    const port = new URL(url).port;
    expect(await rawInitialize(url, { host: `rebound.example:${port}` })).toBe(403);
    expect(await rawInitialize(url, { host: `127.0.0.1:${Number(port) + 1}` })).toBe(403);
    expect(await rawInitialize(url, { origin: 'https://evil.example' })).toBe(403);
    expect(await rawInitialize(url, { origin: 'null' })).toBe(403);
    expect(made.servers).toBe(0);
    expect(serving!.sessionCount()).toBe(0);

    expect(await rawInitialize(url, { host: `localhost:${port}`, origin: `http://localhost:5173` })).toBe(200);
    expect(await rawInitialize(url, { host: `[::1]:${port}`, origin: 'https://app.example' })).toBe(200);
    const client = await connect(url.replace('127.0.0.1', 'localhost'));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['delegate']);
  });

  it('with a token, every request needs it (401 otherwise): initialize, and calls of an open session', async () => {
    const url = await serve({ token: 's3cret-token' });
    expect(await rawInitialize(url, {})).toBe(401);
    expect(await rawInitialize(url, { authorization: 'Bearer wrong' })).toBe(401);
    expect(await rawInitialize(url, { authorization: 'Basic s3cret-token' })).toBe(401);
    expect(made.servers).toBe(0);

    const client = await connect(url, { authorization: 'Bearer s3cret-token' });
    const result = await client.callTool({ name: 'delegate', arguments: { description: 'hi', prompt: 'say hello' } });
    expect(result.content).toEqual([{ type: 'text', text: 'hello' }]);
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId ?? '';
    const call = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(call.status).toBe(401);
    const deleted = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
    expect(deleted.status).toBe(401);
    expect(serving!.sessionCount()).toBe(1);
  });
});

describe('sessions', () => {
  it('a DELETEd session leaves the table and its server is closed; 50 of them leave nothing behind', async () => {
    const url = await serve();
    for (let round = 0; round < 50; round++) {
      const client = await connect(url);
      await client.listTools();
      await (client.transport as StreamableHTTPClientTransport).terminateSession();
      await client.close();
    }
    await until(() => made.closed === 50);
    expect(made.servers).toBe(50);
    expect(serving!.sessionCount()).toBe(0);
  });

  it('a session idle past the idle time is closed; one with a request open is not idle', async () => {
    const url = await serve();
    const children = { started: 0, ended: 0 };
    brood!.subagents.on('start', () => void children.started++);
    brood!.subagents.on('end', () => void children.ended++);
    const client = await connect(url);
    const slow = client
      .request(
        { method: 'tools/call', params: { name: 'delegate', arguments: { description: 's', prompt: 'slow work' } } },
        CallToolResultSchema,
      )
      .catch((error: unknown) => error);
    await until(() => children.started === 1);
    // The slow call's stream is open: no timer armed for the session (the initialize's was cancelled).
    expect(pendingIdle()).toHaveLength(0);
    expect(serving!.sessionCount()).toBe(1);

    // Gone quiet: the client stops listening for the call's answer; the session's timer fires.
    await client.close();
    await until(() => pendingIdle().length === 1);
    pendingIdle()[0]!.fire();
    await until(() => made.closed === 1);
    expect(serving!.sessionCount()).toBe(0);
    expect(await slow).toBeInstanceOf(Error);
    await until(() => children.ended === 1);
  });

  it('at most maxSessions live at once: one more initialize is refused with 503 until one ends', async () => {
    const url = await serve({ maxSessions: 2 });
    const first = await connect(url);
    await connect(url);
    expect(await rawInitialize(url, {})).toBe(503);
    expect(made.servers).toBe(2);
    await (first.transport as StreamableHTTPClientTransport).terminateSession();
    await until(() => serving!.sessionCount() === 1);
    await connect(url);
    expect(serving!.sessionCount()).toBe(2);
  });
});
