/**
 * MCP over Streamable HTTP against a server built with the SDK in this test, on a loopback port:
 * list_changed while an agent is idle, a call that times out (cancelled at the server), an abort
 * that cancels the in-flight call, protocol errors, server restarts, the SSE fallback and the
 * MCP_UNAVAILABLE messages of a server that cannot be reached.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood, mcpTools, memorySessions, scriptedModels } from '../../../src/index.js';
import { route } from '../../support/route.js';
import { tapStore } from '../../support/tap-store.js';
import { requestedTools, StatusLog, toolResults } from './helpers.js';
import { closedPort, failingServer, TestMcpHttpServer } from './http-server.js';

type Scripts = NonNullable<Parameters<typeof scriptedModels>[0]['scripts']>;

let brood: Brood | undefined;
const servers: TestMcpHttpServer[] = [];
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  for (const server of servers.splice(0)) await server.stop();
});

function makeBrood(scripts: Scripts = []): { brood: Brood; tap: ReturnType<typeof tapStore> } {
  const tap = tapStore(memorySessions());
  brood = createBrood({
    pool: { threads: 1 }, // one isolate to boot: the cases run one agent at a time
    sessions: tap.store,
    models: [scriptedModels({ id: 'scripted', scripts })],
  });
  return { brood, tap };
}

async function startServer(
  instance: string,
  port = 0,
  mode: 'streamable' | 'legacySse' = 'streamable',
): Promise<TestMcpHttpServer> {
  const server = new TestMcpHttpServer(instance, mode);
  await server.start(port);
  servers.push(server);
  return server;
}

/** Resolves once the registry satisfies `test` (checked on every change event). */
function registryWhere(brood: Brood, test: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (test()) return resolve();
    const off = brood.tools.on('change', () => {
      if (!test()) return;
      off();
      resolve();
    });
  });
}

describe('Streamable HTTP', () => {
  it('list_changed while an agent is idle: added, changed and removed tools reach its next request', async () => {
    const server = await startServer('a');
    // One script for the session: its steps are consumed in order across the three turns.
    const { brood } = makeBrood([
      {
        match: 'live',
        turns: [
          { text: 'one' },
          { toolCalls: [{ name: 'mcp__remote__added', arguments: { text: 'new' } }] },
          { text: '{{results}}' },
          { toolCalls: [{ name: 'mcp__remote__added', arguments: { text: 'gone' } }] },
          { text: '{{results}}' },
        ],
      },
    ]);
    await brood.use(
      mcpTools({ name: 'remote', url: server.url, headers: { 'x-brood-test': 'yes' } }, { include: ['echo', 'added'] }),
    );
    expect(server.initHeaders[0]?.['x-brood-test']).toBe('yes');
    await server.next('stream-open'); // the server can now reach the idle client
    const agent = await brood.createAgent({ model: route });
    await agent.run('live one');
    await agent.whenIdle();

    server.tools.push({
      name: 'added',
      description: 'added later',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    });
    server.tools[0] = { ...server.tools[0]!, description: 'echoes text, now documented better' };
    const updated = registryWhere(brood, () => {
      const view = brood.tools.view();
      return (
        view.has('mcp__remote__added') &&
        view.schemas.some((s) => s.description === 'echoes text, now documented better')
      );
    });
    await server.listChanged();
    await updated;
    expect(agent.status).toBe('idle');
    const second = await agent.run('live two');
    expect(second.output).toBe('a:added:new');

    server.tools = server.tools.filter((tool) => tool.name !== 'added');
    const removed = registryWhere(brood, () => !brood.tools.view().has('mcp__remote__added'));
    await server.listChanged();
    await removed;
    const third = await agent.run('live three');
    expect(third.output).toMatch(/Unknown tool/);

    const events = (await brood.sessions.read(agent.id)).events;
    expect(requestedTools(events)).toEqual([
      ['mcp__remote__echo'],
      ['mcp__remote__added', 'mcp__remote__echo'],
      ['mcp__remote__added', 'mcp__remote__echo'],
      ['mcp__remote__echo'],
      ['mcp__remote__echo'],
    ]);
    const results = toolResults(events);
    expect(results[1]).toMatchObject({ name: 'mcp__remote__added', isError: true, errorCode: 'UNKNOWN_TOOL' });
  });

  it('a call past timeoutMs is cancelled at the server and errors MCP_ERROR; a protocol error is MCP_ERROR too', async () => {
    const server = await startServer('a');
    const { brood } = makeBrood();
    await brood.use(mcpTools({ name: 'remote', url: server.url }, { timeoutMs: 1_500 }));
    const cancelled = server.next('cancelled:slow');
    const timedOut = await brood.tools.execute({ name: 'mcp__remote__slow', arguments: {} });
    expect(timedOut).toMatchObject({ isError: true, error: { code: 'MCP_ERROR' } });
    expect(timedOut.content).toMatch(/1500 ms/);
    await cancelled; // notifications/cancelled reached the server's handler
    const broken = await brood.tools.execute({ name: 'mcp__remote__broken', arguments: {} });
    expect(broken).toMatchObject({ isError: true, error: { code: 'MCP_ERROR' } });
    expect(broken.content).toContain('the broken tool broke');
    // The connection is fine afterwards.
    expect((await brood.tools.execute({ name: 'mcp__remote__echo', arguments: { text: 'ok' } })).content).toBe(
      'a:echo:ok',
    );
  });

  it('cancelling the turn sends MCP cancellation for the in-flight call', async () => {
    const server = await startServer('a');
    const { brood } = makeBrood([
      { match: 'wait', turns: [{ toolCalls: [{ name: 'mcp__remote__slow', arguments: {} }] }, { text: 'never' }] },
    ]);
    await brood.use(mcpTools({ name: 'remote', url: server.url }));
    const agent = await brood.createAgent({ model: route });
    const started = server.next('call:slow');
    const cancelled = server.next('cancelled:slow');
    const turn = agent.run('wait');
    await started;
    agent.cancel();
    expect((await turn).stopReason).toBe('aborted');
    await cancelled;
  });

  it('server restart: calls fail MCP_UNAVAILABLE while it is gone, the connection comes back with the new tool list', async () => {
    const first = await startServer('a');
    const status = new StatusLog();
    const { brood } = makeBrood();
    await brood.use(mcpTools({ name: 'remote', url: first.url }, { onStatus: status.onStatus }));
    expect((await brood.tools.execute({ name: 'mcp__remote__echo', arguments: { text: '1' } })).content).toBe(
      'a:echo:1',
    );
    const port = first.port;
    await first.stop();
    const gone = await brood.tools.execute({ name: 'mcp__remote__echo', arguments: { text: '2' } });
    expect(gone).toMatchObject({ isError: true, error: { code: 'MCP_UNAVAILABLE' } });
    expect(brood.tools.view().has('mcp__remote__echo')).toBe(true); // tools stay registered while down

    const back = status.next((s) => s.state === 'connected');
    const second = new TestMcpHttpServer('b');
    second.tools.push({ name: 'extra', description: 'only on b', inputSchema: { type: 'object', properties: {} } });
    await second.start(port);
    servers.push(second);
    await back;
    expect(brood.tools.view().has('mcp__remote__extra')).toBe(true);
    expect((await brood.tools.execute({ name: 'mcp__remote__echo', arguments: { text: '3' } })).content).toBe(
      'b:echo:3',
    );
  });

  it('a server that no longer knows the session (404, as after a restart) is re-initialized and the call succeeds', async () => {
    const server = await startServer('a');
    const { brood } = makeBrood();
    await brood.use(mcpTools({ name: 'remote', url: server.url }));
    expect(server.initHeaders).toHaveLength(1);
    await server.forgetSessions();
    const result = await brood.tools.execute({ name: 'mcp__remote__echo', arguments: { text: 'again' } });
    expect(result).toMatchObject({ isError: false, content: 'a:echo:again' });
    expect(server.initHeaders).toHaveLength(2); // a new initialize, then the call once more
  });

  it('sanitised and shortened names call the server with the original tool name; a clash after sanitising fails DUPLICATE_TOOL', async () => {
    const server = await startServer('a');
    const long = `report.${'q'.repeat(70)}`;
    server.tools = [
      { name: 'dotted.name v2', description: 'odd characters', inputSchema: { type: 'object', properties: {} } },
      { name: long, description: 'a long name', inputSchema: { type: 'object', properties: {} } },
    ];
    const { brood } = makeBrood();
    await brood.use(mcpTools({ name: 'remote', url: server.url }));
    const names = brood.tools.view().names;
    expect(names).toContain('mcp__remote__dotted_name_v2');
    const short = names.find((name) => name.startsWith('mcp__remote__report_'));
    expect(short).toHaveLength(64);
    expect((await brood.tools.execute({ name: 'mcp__remote__dotted_name_v2', arguments: {} })).content).toBe(
      'a:dotted.name v2:',
    );
    expect((await brood.tools.execute({ name: short!, arguments: {} })).content).toBe(`a:${long}:`);

    server.tools = [
      { name: 'a.b', description: 'one', inputSchema: { type: 'object', properties: {} } },
      { name: 'a_b', description: 'two', inputSchema: { type: 'object', properties: {} } },
    ];
    const clash = await brood.use(mcpTools({ name: 'clash', url: server.url })).catch((error: unknown) => error);
    expect(clash).toMatchObject({ code: 'DUPLICATE_TOOL' });
    expect(brood.tools.view().names.filter((name) => name.startsWith('mcp__clash__'))).toEqual([]);
  });

  it('the disposer ends the HTTP session (DELETE) and removes the tools', async () => {
    const server = await startServer('a');
    const { brood } = makeBrood();
    const dispose = await brood.use(mcpTools({ name: 'remote', url: server.url }));
    expect(server.sessionCount).toBe(1);
    await dispose();
    expect(server.sessionCount).toBe(0);
    expect(brood.tools.view().names).toEqual([]);
  });

  it('an old HTTP+SSE server is reached through the SDK fallback', async () => {
    const server = await startServer('old', 0, 'legacySse');
    const { brood } = makeBrood();
    await brood.use(mcpTools({ name: 'legacy', url: server.url }));
    expect((await brood.tools.execute({ name: 'mcp__legacy__echo', arguments: { text: 'sse' } })).content).toBe(
      'old:echo:sse',
    );
  });

  it('a server that cannot be reached fails use() with MCP_UNAVAILABLE naming the server and the failure, registering nothing', async () => {
    const { brood } = makeBrood();
    const refused = await brood
      .use(mcpTools({ name: 'nobody', url: `http://127.0.0.1:${await closedPort()}/mcp` }))
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'MCP_UNAVAILABLE' });
    expect(String((refused as Error).message)).toMatch(/"nobody".*ECONNREFUSED/);
    const failing = await failingServer();
    try {
      const status = await brood.use(mcpTools({ name: 'broken', url: failing.url })).catch((error: unknown) => error);
      expect(status).toMatchObject({ code: 'MCP_UNAVAILABLE' });
      expect(String((status as Error).message)).toMatch(/"broken".*HTTP 500/);
    } finally {
      await failing.close();
    }
    expect(brood.tools.view().names).toEqual([]);
  });
});
