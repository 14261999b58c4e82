/**
 * What a host may write into a parent's sessions (docs/scale-out.md "What is guaranteed"): only the
 * events of an activation this parent created and bound to that host. A host acting for an activation
 * id the parent never created (a host still running a previous parent's work, or anyone writing to the
 * parent's list without a secret) is told `gone`, and nothing it sends reaches the store; one acting
 * for a live activation it was never bound to is told `gone` and the activation is re-planned.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Brood, createBrood } from '../../src/brood.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { Channel } from '../../src/queue/channel.js';
import { queueRunner } from '../../src/queue/config.js';
import { channelKey, createClient, disconnect, type RedisClient } from '../../src/queue/redis.js';
import { route } from '../support/route.js';
import { until } from '../support/until.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

const QUEUE = 'fence';

describe.runIf(redisAvailable())('queue runner fencing', () => {
  let redis: RedisServer;
  let brood: Brood | undefined;
  let host: HostProcess | undefined;
  const clients: RedisClient[] = [];
  /** Closed after each test, before the clients they use. */
  const closers: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    redis = await RedisServer.start();
  });
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
    if (host) await stopHost(host);
    host = undefined;
    for (const close of closers.splice(0)) await close();
    await Promise.all(clients.splice(0).map((client) => disconnect(client)));
    await redis.dispose();
  });

  const client = async (): Promise<RedisClient> => {
    const made = await createClient(redis.url, { name: 'test', bounded: false });
    clients.push(made);
    return made;
  };

  it('frames for an activation the parent did not create, or did not bind to the sender: told gone, never logged', async () => {
    brood = createBrood({
      onDiagnostic: () => undefined,
      runner: queueRunner({ connection: redis.url, queue: QUEUE, activationTimeoutMs: 2_000 }),
      models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'hello', turns: [{ text: 'hello back' }] }] })],
    });
    const agent = await brood.createAgent({ model: route });
    const result = agent.run('hello');
    // No host yet: the activation waits as a job, which names the parent's endpoint and its activation id.
    const { Queue } = await import('bullmq');
    const queue = new Queue(QUEUE, { connection: await client(), prefix: 'brood' });
    closers.push(() => queue.close());
    let job: { parent: string; a: number } | undefined;
    await until(async () => {
      job = (await queue.getWaiting())[0]?.data as typeof job;
      return job !== undefined;
    });
    const { parent, a } = job as { parent: string; a: number };
    const toForger: { k: string; a?: number }[] = [];
    const forger = new Channel(
      'forger',
      await client(),
      await client(),
      (endpoint) => channelKey('brood', QUEUE, endpoint),
      60_000,
      {
        batch: (_from, frames) => toForger.push(...(frames as { k: string; a?: number }[])),
        broken: () => undefined,
        malformed: () => undefined,
      },
    );
    closers.push(() => forger.close());
    forger.start();
    const forged = (text: string) => [{ type: 'assistant/message', data: { text, finish: 'stop' } }];
    forger.sendBatch(parent, [
      { k: 'hello', a: a + 1000, host: { name: 'forger', pid: 1 } },
      { k: 'log', a: a + 1000, events: forged('forged: never created') },
      { k: 'log', a, events: forged('forged: not bound to the sender') },
    ]);
    await until(() => toForger.filter((frame) => frame.k === 'gone').length >= 2);
    expect(toForger.filter((frame) => frame.k === 'gone').map((frame) => frame.a)).toEqual(
      expect.arrayContaining([a + 1000, a]),
    );
    // A real host finishes the turn: the re-planned activation runs once.
    host = await startHost(redis.url, ['--queue', QUEUE]);
    expect(await result).toMatchObject({ stopReason: 'completed', output: 'hello back' });
    const events = (await brood.sessions.read(agent.id)).events;
    expect(JSON.stringify(events)).not.toContain('forged');
    expect(events.filter((event) => event.type === 'model/request')).toHaveLength(1);
  }, 60_000);
});
