/**
 * `brood host --threads 0`: the drivers run on the host's main thread, with no pool. Everything a
 * parent sees is the same: children run there, every tool body runs once in the parent, and a cancel
 * reaches the remote driver.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Brood, createBrood } from '../../src/brood.js';
import { subagentTool } from '../../src/delegation/index.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { queueRunner } from '../../src/queue/config.js';
import { spawnProvider } from '../../src/subagents/providers.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';
import { route } from '../support/route.js';
import { until } from '../support/until.js';

const N = 24;
const subagent = (prompt: string) => ({ name: 'subagent', arguments: { description: `task ${prompt}`, prompt } });

describe.runIf(redisAvailable())('brood host --threads 0 (drivers on its main thread)', () => {
  let redis: RedisServer;
  let host: HostProcess;
  let brood: Brood | undefined;

  beforeAll(async () => {
    redis = await RedisServer.start();
    host = await startHost(redis.url, ['--threads', '0', '--concurrency', '32']);
  });
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
  });
  afterAll(async () => {
    await stopHost(host);
    await redis?.dispose();
  });

  it('says so in its ready line, runs a fan-out of children there, and runs every tool body once in the parent', async () => {
    expect(host.stderr()).toMatch(/^brood host ready brood threads=0 concurrency=32$/m);
    let calls = 0;
    brood = createBrood({
      maxParallelToolCalls: N,
      pool: { threads: 1 },
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'fan out',
              turns: [{ toolCalls: Array.from({ length: N }, (_, i) => subagent(`child ${i}`)) }, { text: 'done' }],
            },
            { match: 'child', turns: [{ toolCalls: [{ name: 'work', arguments: {} }] }, { text: 'ok {{results}}' }] },
          ],
        }),
      ],
      providers: [spawnProvider({ name: 'remote', runner: queueRunner({ connection: redis.url }) })],
    });
    brood.tools.register(
      defineTool({
        name: 'work',
        description: 'works',
        parameters: { type: 'object', properties: {} },
        execute: () => {
          calls += 1;
          return 'worked';
        },
      }),
    );
    brood.use(subagentTool({ provider: 'remote' }));
    const children: string[] = [];
    brood.subagents.on('start', (event) => children.push(event.id));
    const parent = await brood.createAgent({ model: route });
    expect(await parent.run('fan out')).toMatchObject({ stopReason: 'completed', output: 'done' });
    expect(children).toHaveLength(N);
    // One call per child, each run in this process (a host never has the tool).
    expect(calls).toBe(N);
    for (const id of children) {
      const requests = (await brood.sessions.read(id)).events.filter((event) => event.type === 'model/request');
      expect(requests.map((request) => (request.data.host as { pid: number }).pid)).toEqual([
        host.child.pid,
        host.child.pid,
      ]);
    }
  });

  it('cancels a turn whose driver waits on its model there', async () => {
    brood = createBrood({
      runner: queueRunner({ connection: redis.url }),
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'slow', latencyMs: 60_000, turns: [{ text: 'never' }] }] }),
      ],
    });
    const agent = await brood.createAgent({ model: route });
    const slow = agent.run('slow');
    await until(async () =>
      (await brood!.sessions.read(agent.id)).events.some((event) => event.type === 'model/request'),
    );
    agent.cancel();
    expect((await slow).stopReason).toBe('aborted');
  });
});
