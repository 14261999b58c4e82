/**
 * A Streamable HTTP MCP server whose answer to a call is malformed (`result: null`, a result that is
 * not an object), sent as a JSON body or as an event stream: the call fails at once with a one-line
 * MCP_ERROR, and the same connection serves the next call. (The SDK alone drops a malformed event
 * from a stream and the call waits out its whole timeout.) The server is a loopback HTTP server
 * written here, speaking the protocol's wire format directly so that it can misbehave.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood, mcpTools } from '../../../src/index.js';

const TIMEOUT_MS = 20_000;
const SHORT = 400;

type Format = 'json' | 'event stream';
interface Rpc {
  id?: number | string;
  method: string;
  params?: { name?: string; arguments?: { answer?: unknown; format?: Format }; protocolVersion?: string };
}

const TOOLS = [
  { name: 'raw', description: 'answers what it is told to', inputSchema: { type: 'object' } },
  { name: 'fine', description: 'answers well', inputSchema: { type: 'object' } },
];

function send(res: ServerResponse, format: Format, message: object): void {
  if (format === 'json') {
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' });
    res.end(JSON.stringify(message));
  } else {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'session-1' });
    res.end(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}

/** What the server answers a request with, and how it sends it. */
function resultOf(rpc: Rpc): { result: unknown; format: Format } {
  if (rpc.method === 'initialize') {
    const serverInfo = { name: 'odd', version: '1.0.0' };
    return {
      result: { protocolVersion: rpc.params?.protocolVersion, capabilities: { tools: {} }, serverInfo },
      format: 'json',
    };
  }
  if (rpc.method === 'tools/list') return { result: { tools: TOOLS }, format: 'json' };
  const { answer, format = 'json' } = rpc.params?.arguments ?? {};
  if (rpc.params?.name === 'raw') return { result: answer, format };
  return { result: { content: [{ type: 'text', text: 'fine' }] }, format };
}

function answer(rpc: Rpc, res: ServerResponse): void {
  if (rpc.id === undefined) {
    res.writeHead(202).end(); // a notification
    return;
  }
  const { result, format } = resultOf(rpc);
  send(res, format, { jsonrpc: '2.0', id: rpc.id, result });
}

async function oddServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Rpc, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let brood: Brood | undefined;
let closeServer: (() => Promise<void>) | undefined;
afterEach(async () => {
  await brood?.close();
  await closeServer?.();
  brood = undefined;
  closeServer = undefined;
});

describe.each<Format>(['json', 'event stream'])('a malformed answer sent as %s', (format) => {
  it.each([
    ['result: null', null],
    ['a result that is not an object', 'done'],
    ['content blocks that are not content blocks', { content: [{ type: 'text' }, 42] }],
  ])(
    '%s fails the call at once with a one-line MCP_ERROR; the connection serves the next call',
    async (_label, bad) => {
      const server = await oddServer();
      closeServer = server.close;
      const statuses: string[] = [];
      brood = createBrood({ runner: 'inline' });
      await brood.use(
        mcpTools({ name: 'odd', url: server.url }, { timeoutMs: TIMEOUT_MS, onStatus: (s) => statuses.push(s.state) }),
      );
      const started = performance.now();
      const result = await brood.tools.execute({ name: 'mcp__odd__raw', arguments: { answer: bad, format } });
      const ms = performance.now() - started;

      expect(result).toMatchObject({ isError: true, error: { code: 'MCP_ERROR' } });
      expect(ms).toBeLessThan(TIMEOUT_MS / 2);
      expect(result.error?.message).not.toContain('\n');
      expect(result.error?.message.length).toBeLessThan(SHORT);
      await expect(brood.tools.execute({ name: 'mcp__odd__fine', arguments: { format } })).resolves.toMatchObject({
        isError: false,
        content: 'fine',
      });
      expect(statuses).not.toContain('down');
    },
  );
});
