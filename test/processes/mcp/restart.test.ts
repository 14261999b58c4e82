/**
 * A stdio MCP server that dies: killed mid-call the call errors MCP_UNAVAILABLE, the runtime keeps
 * working and the server is restarted (0.5 s, doubling, at most 5 attempts in a row, then one attempt
 * per later call); while it is down its tools stay registered and answer MCP_UNAVAILABLE.
 * The fixture is a real stdio server built with the SDK (test/mcp/fixtures/stdio-server.mjs).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood, defineTool, mcpTools, memorySessions, scriptedModels } from '../../../src/index.js';
import { mcpToolsOnClock } from '../../../src/mcp/plugin.js';
import { route } from '../../support/route.js';
import { processExists } from '../../support/running.js';
import { tapStore } from '../../support/tap-store.js';
import {
  announcements,
  childProcesses,
  FAST_CLOCK,
  FIXTURE_SCRIPT,
  fixture,
  StatusLog,
  toolResults,
} from './helpers.js';

type Scripts = NonNullable<Parameters<typeof scriptedModels>[0]['scripts']>;

let brood: Brood | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function makeBrood(scripts: Scripts = []): Brood {
  brood = createBrood({
    pool: { threads: 1 }, // one isolate to boot: the cases run one agent at a time
    sessions: tapStore(memorySessions()).store,
    models: [scriptedModels({ id: 'scripted', scripts })],
  });
  return brood;
}

async function failFlag(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'brood-mcp-flag-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'down');
}

const ping = { name: 'mcp__fixture__ping', arguments: {} };

describe('stdio server crash and restart', () => {
  it('killed mid-call: the call errors MCP_UNAVAILABLE, the runtime keeps working, the server comes back', async () => {
    const announce = await announcements();
    cleanups.push(() => announce.close());
    const status = new StatusLog();
    const brood = makeBrood([
      {
        match: 'crash',
        turns: [
          { toolCalls: [{ name: 'mcp__fixture__hang', arguments: {} }] },
          { toolCalls: [{ name: 'local', arguments: {} }] },
          { text: 'still here' },
        ],
      },
    ]);
    brood.tools.register(
      defineTool({
        name: 'local',
        description: 'a plain tool',
        parameters: { type: 'object', properties: {} },
        execute: () => 'local ok',
      }),
    );
    await brood.use(mcpTools(fixture({ FIXTURE_ANNOUNCE_URL: announce.url }), { onStatus: status.onStatus }));
    const [firstPid] = await childProcesses(FIXTURE_SCRIPT);
    const agent = await brood.createAgent({ model: route });
    const back = status.next((s) => s.state === 'connected');

    const turn = agent.run('crash');
    const pid = await announce.next(); // the call is in flight at the server
    expect(pid).toBe(firstPid);
    process.kill(pid, 'SIGKILL');
    const result = await turn;

    expect(result).toMatchObject({ stopReason: 'completed', output: 'still here' });
    const [hang, local] = toolResults((await brood.sessions.read(agent.id)).events);
    expect(hang).toMatchObject({ name: 'mcp__fixture__hang', isError: true, errorCode: 'MCP_UNAVAILABLE' });
    expect(String(hang?.content)).toContain('SIGKILL');
    expect(local).toMatchObject({ name: 'local', isError: false, content: 'local ok' });

    await back;
    expect(status.seen[0]).toMatchObject({ state: 'down', retryInMs: 500 });
    expect(processExists(pid)).toBe(false);
    const [newPid] = await childProcesses(FIXTURE_SCRIPT);
    expect(newPid).not.toBe(pid);
    expect(await brood.tools.execute(ping)).toMatchObject({ isError: false, content: `pong ${newPid}` });
  });

  it('while it cannot restart its tools stay registered and answer MCP_UNAVAILABLE with the exit code and stderr; it comes back once it can start', async () => {
    const flag = await failFlag();
    const status = new StatusLog();
    const brood = makeBrood();
    await brood.use(mcpTools(fixture({ FIXTURE_FAIL_FLAG: flag }), { onStatus: status.onStatus }));
    const [pid] = await childProcesses(FIXTURE_SCRIPT);
    await writeFile(flag, '');
    const retrying = status.next((s) => s.state === 'down' && s.retryInMs === 1_000);
    process.kill(pid!, 'SIGKILL');
    const down = await retrying; // the first restart attempt (after 0.5 s) failed
    expect(down).toMatchObject({
      state: 'down',
      error: expect.stringMatching(/exited with code 2.*refusing to start/),
    });

    expect(brood.tools.view().has('mcp__fixture__ping')).toBe(true);
    const refused = await brood.tools.execute(ping);
    expect(refused).toMatchObject({ isError: true, error: { code: 'MCP_UNAVAILABLE' } });
    expect(refused.content).toContain('"fixture"');

    const back = status.next((s) => s.state === 'connected');
    await rm(flag);
    await back;
    expect((await brood.tools.execute(ping)).content).toMatch(/^pong \d+$/);
  });

  it('after 5 failed attempts in a row it stops retrying on its own; the next call makes one attempt', async () => {
    const flag = await failFlag();
    const status = new StatusLog();
    const brood = makeBrood();
    // The whole schedule (15.5 s) on a clock fifty times faster.
    await brood.use(mcpToolsOnClock(fixture({ FIXTURE_FAIL_FLAG: flag }), { onStatus: status.onStatus }, FAST_CLOCK));
    const [pid] = await childProcesses(FIXTURE_SCRIPT);
    await writeFile(flag, '');
    const gaveUp = status.next((s) => s.state === 'down' && s.retryInMs === undefined);
    process.kill(pid!, 'SIGKILL');
    await gaveUp;
    // The loss, then one status per failed attempt: 0.5 s doubling.
    expect(status.seen.map((s) => (s.state === 'down' ? s.retryInMs : 'up'))).toEqual([
      500,
      1_000,
      2_000,
      4_000,
      8_000,
      undefined,
    ]);
    expect(await childProcesses(FIXTURE_SCRIPT)).toEqual([]);

    // Still down: a call makes exactly one attempt and fails.
    const stillDown = await brood.tools.execute(ping);
    expect(stillDown.error?.code).toBe('MCP_UNAVAILABLE');
    expect(status.seen).toHaveLength(7);

    await rm(flag);
    const revived = await brood.tools.execute(ping); // this call's attempt succeeds and the call is served
    expect(revived).toMatchObject({ isError: false, content: expect.stringMatching(/^pong \d+$/) });
    expect(status.seen.at(-1)).toMatchObject({ state: 'connected' });
  });
});
