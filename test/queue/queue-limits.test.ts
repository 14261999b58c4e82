/**
 * Governed fan-out through the queue runner: drivers on `brood host` processes ask the parent for
 * admission over the same gateway, so limits.providers holds for children run remotely too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrood } from '../../src/brood.js';
import { subagentTool } from '../../src/delegation/index.js';
import { openAICompatible } from '../../src/models/openai.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { queueRunner } from '../../src/queue/config.js';
import { spawnProvider } from '../../src/subagents/providers.js';
import { fanOutScript } from '../support/fan-out.js';
import { type LoopbackModel, startLoopbackModel } from '../support/loopback-model.js';
import { route } from '../support/route.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

describe.runIf(redisAvailable())('limits with the queue runner', () => {
  let redis: RedisServer;
  let hosts: HostProcess[] = [];
  let server: LoopbackModel;

  beforeAll(async () => {
    redis = await RedisServer.start();
    hosts = await Promise.all([
      startHost(redis.url, ['--concurrency', '50']),
      startHost(redis.url, ['--concurrency', '50']),
    ]);
    server = await startLoopbackModel({
      answer: () => 'ok',
      latencyMs: 20,
      limit: { concurrent: 2, retryAfterMs: 100 },
    });
  });
  afterAll(async () => {
    await Promise.all(hosts.map((host) => stopHost(host)));
    await redis?.dispose();
    await server?.close();
  });

  it('holds limits.providers.concurrent for children whose drivers run on hosts', async () => {
    const n = 12;
    const brood = createBrood({
      maxParallelToolCalls: n,
      limits: { providers: { loop: { concurrent: 2 } } },
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [fanOutScript(n)],
        }),
        openAICompatible({ id: 'loop', baseURL: server.baseURL, models: ['m'] }),
      ],
      pool: { threads: 1 },
      providers: [spawnProvider({ name: 'remote', runner: queueRunner({ connection: redis.url }) })],
    });
    try {
      brood.use(subagentTool({ provider: 'remote', agentOptions: { provider: 'loop', model: 'm' } }));
      const root = await brood.createAgent({ model: route });
      const result = await root.run('fan out');
      expect(result.stopReason).toBe('completed');
      expect(server.requests.length).toBe(n);
      expect(server.counts.maxInFlight).toBe(2);
      expect(server.counts.throttled).toBe(0);
    } finally {
      await brood.close();
    }
  });
});
