/**
 * How brood reads what a stdio MCP server answers when a call goes wrong, against a real server
 * built with the official SDK (test/mcp/fixtures/misbehaving-server.mjs):
 * - a JSON-RPC error reply is MCP_ERROR carrying the server's code and message, whatever the code
 *   (−32000 and −32001 are also the SDK's own codes for "connection closed" and "timed out"); the
 *   connection stays up: no restart, the server keeps its state;
 * - a malformed or oversized answer fails that call at once with a one-line cause, and the next call
 *   is served by the same process.
 * Promptness is checked against a generous bound: well under the configured timeout.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, McpStdioServer, ToolResult } from '../../../src/index.js';
import { createBrood, mcpTools } from '../../../src/index.js';
import { StatusLog } from './helpers.js';

const MISBEHAVING_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'misbehaving-server.mjs');
const server: McpStdioServer = { name: 'odd', command: process.execPath, args: [MISBEHAVING_SCRIPT] };
const TIMEOUT_MS = 20_000;
/** What a one-line cause may take: a sentence naming the server, the tool and what was wrong. */
const SHORT = 400;

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

async function connect(): Promise<{ brood: Brood; status: StatusLog }> {
  const status = new StatusLog();
  brood = createBrood({ runner: 'inline' });
  await brood.use(mcpTools(server, { timeoutMs: TIMEOUT_MS, onStatus: status.onStatus }));
  return { brood, status };
}

function call(brood: Brood, tool: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return brood.tools.execute({ name: `mcp__odd__${tool}`, arguments: args });
}

/** "<n> <pid>" from the `calls` tool. */
async function calls(brood: Brood): Promise<{ n: number; pid: number }> {
  const result = await call(brood, 'calls');
  expect(result.isError).toBe(false);
  const [n, pid] = result.content.split(' ').map(Number);
  return { n: n!, pid: pid! };
}

async function timed(work: Promise<ToolResult>): Promise<{ result: ToolResult; ms: number }> {
  const started = performance.now();
  const result = await work;
  return { result, ms: performance.now() - started };
}

describe("a server's JSON-RPC error reply", () => {
  it.each([
    [-32000, 'database is locked'],
    [-32001, 'the upstream API timed out'],
    [-32603, 'internal failure'],
  ])('%i is MCP_ERROR with the server’s code and message; the connection and its state stay', async (code, message) => {
    const { brood, status } = await connect();
    const first = await calls(brood);
    const { result, ms } = await timed(call(brood, 'fail', { code, message }));
    expect(result).toMatchObject({ isError: true, error: { code: 'MCP_ERROR' } });
    expect(result.error?.message).toContain(String(code));
    expect(result.error?.message).toContain(message);
    expect(ms).toBeLessThan(TIMEOUT_MS / 2);
    expect(await calls(brood)).toEqual({ n: first.n + 1, pid: first.pid });
    expect(status.seen).toEqual([]); // never went down, never reconnected
  });
});

describe('a malformed or oversized answer', () => {
  it.each([
    ['result: null', { result: null }],
    ['a result whose content blocks are not content blocks', { result: { content: [{ type: 'text' }, 42] } }],
    ['a result that is not an object', { result: 'done' }],
    ['an answer larger than the message limit (11 MB)', { bytes: 11 * 1024 * 1024 }],
  ])(
    '%s fails the call at once with a one-line MCP_ERROR; the same process serves the next call',
    async (_label, args) => {
      const { brood, status } = await connect();
      const first = await calls(brood);
      const { result, ms } = await timed(call(brood, 'raw', args));
      expect(result).toMatchObject({ isError: true, error: { code: 'MCP_ERROR' } });
      expect(ms).toBeLessThan(TIMEOUT_MS / 2);
      expect(result.error?.message).not.toContain('\n');
      expect(result.error?.message.length).toBeLessThan(SHORT);
      expect(result.content.length).toBeLessThan(SHORT + 20);
      expect(await calls(brood)).toEqual({ n: first.n + 1, pid: first.pid });
      expect(status.seen).toEqual([]);
    },
  );
});
