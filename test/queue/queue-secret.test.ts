/**
 * queueRunner with a secret, end to end: the parent and a `brood host --secret-env` seal every batch;
 * a forged unsealed batch pushed into the parent's channel mid-run (a high sequence number in the
 * host's place, the batch that used to stall a run for good) is dropped, reported in one diagnostic
 * line, and the run completes. A host told to read a secret from an unset variable refuses to start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrood } from '../../src/brood.js';
import { subagentTool } from '../../src/delegation/index.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { queueRunner } from '../../src/queue/config.js';
import { channelKey, createClient, disconnect } from '../../src/queue/redis.js';
import { spawnProvider } from '../../src/subagents/providers.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { fanOutScript } from '../support/fan-out.js';
import { route } from '../support/route.js';
import { assertBuilt } from '../support/run-cli.js';
import { until } from '../support/until.js';
import { type HostProcess, RedisServer, redisAvailable, spawnHost, startHost, stopHost } from './redis-harness.js';

const SECRET_ENV = 'BROOD_TEST_QUEUE_SECRET';
const SECRET = 'queue-secret-for-the-test-0123456789';
const N = 4;

describe.runIf(redisAvailable())('queueRunner with a secret', () => {
  let redis: RedisServer;
  let host: HostProcess;

  beforeAll(async () => {
    assertBuilt();
    redis = await RedisServer.start();
    process.env[SECRET_ENV] = SECRET;
    host = await startHost(redis.url, ['--secret-env', SECRET_ENV]);
  });
  afterAll(async () => {
    delete process.env[SECRET_ENV];
    await stopHost(host);
    await redis?.dispose();
  });

  it('seals every batch; a forged one is dropped in one diagnostic line and the run completes', async () => {
    const diagnostics: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = 0;
    const brood = createBrood({
      maxParallelToolCalls: N,
      pool: { threads: 1 },
      onDiagnostic: (line) => diagnostics.push(line),
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            fanOutScript(N),
            { match: 'child', turns: [{ toolCalls: [{ name: 'hold', arguments: {} }] }, { text: '{{results}}' }] },
          ],
        }),
      ],
      providers: [spawnProvider({ name: 'remote', runner: queueRunner({ connection: redis.url, secret: SECRET }) })],
    });
    brood.tools.register(
      defineTool({
        name: 'hold',
        description: 'holds until released',
        parameters: { type: 'object', properties: {} },
        concurrencySafe: true,
        execute: async () => {
          holding += 1;
          await released;
          return 'held';
        },
      }),
    );
    brood.use(subagentTool({ provider: 'remote' }));
    const raw = await createClient(redis.url, { name: 'forger', bounded: false });
    try {
      const parent = await brood.createAgent({ model: route });
      const result = parent.run('fan out');
      await until(() => holding === N);
      // The parent's id is in its job ids (`<parent>-<activation>`), which name BullMQ's job keys.
      const keys = await raw.keys('brood:*');
      const parentId = keys.map((key) => /:(p[0-9a-f]{32})-\d+/.exec(key)?.[1]).find((id) => id !== undefined);
      expect(parentId).toBeDefined();
      const forged = JSON.stringify({ from: 'h-someone', seq: 999_999_999, frames: [{ k: 'beat' }] });
      await raw.lpush(channelKey('brood', 'brood', parentId as string), forged);
      await until(() => diagnostics.some((line) => line.includes('failed authentication')));
      release();
      expect((await result).stopReason).toBe('completed');
      expect(diagnostics.filter((line) => line.includes('failed authentication'))).toHaveLength(1);
      expect(host.stderr()).not.toContain('failed authentication');
    } finally {
      release();
      await disconnect(raw);
      await brood.close();
    }
  });

  it('brood host --secret-env naming an unset variable: a usage error, no ready line', async () => {
    const refused = spawnHost(redis.url, ['--secret-env', 'BROOD_TEST_UNSET_SECRET']);
    expect(await refused.exited).not.toBe(0);
    expect(refused.stderr()).toContain('--secret-env BROOD_TEST_UNSET_SECRET');
    expect(refused.stderr()).not.toContain('brood host ready');
  });
});
