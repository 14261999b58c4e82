/**
 * Placement: with each hello and end of a parent's activation a host tells it how much room it has; the
 * parent's next activations go to it as `place` frames on their link instead of BullMQ jobs. BullMQ's
 * event stream is the witness: every job added leaves an `added` entry there, a placed activation none.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Brood, createBrood } from '../../src/brood.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { Channel } from '../../src/queue/channel.js';
import { queueRunner } from '../../src/queue/config.js';
import { isJobData, type JobData } from '../../src/queue/job.js';
import { channelKey, createClient, disconnect } from '../../src/queue/redis.js';
import { route } from '../support/route.js';
import { until } from '../support/until.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

const hello = scriptedModels({ id: 'scripted', scripts: [{ match: 'hello', turns: [{ text: 'hello back' }] }] });

describe.runIf(redisAvailable())('queueRunner placement on hosts with room', () => {
  let redis: RedisServer;
  let hosts: HostProcess[] = [];
  let brood: Brood | undefined;

  beforeEach(async () => {
    redis = await RedisServer.start();
  });
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
    await Promise.all(hosts.map((host) => stopHost(host)));
    hosts = [];
    await redis.dispose();
  });

  /** The jobs BullMQ was given on queue `brood` so far. */
  async function jobsAdded(): Promise<number> {
    const { Redis } = await import('ioredis');
    const probe = new Redis(redis.url);
    try {
      const entries = await probe.xrange('brood:brood:events', '-', '+');
      return entries.filter(([, fields]) => fields[0] === 'event' && fields[1] === 'added').length;
    } finally {
      probe.disconnect();
    }
  }

  /** Runs 'hello' on a fresh agent; returns the pid of the host its model request ran on. */
  async function helloOnce(runtime: Brood): Promise<unknown> {
    const agent = await runtime.createAgent({ model: route });
    expect(await agent.run('hello')).toMatchObject({ stopReason: 'completed', output: 'hello back' });
    const requests = (await runtime.sessions.read(agent.id)).events.filter((event) => event.type === 'model/request');
    expect(requests).toHaveLength(1);
    return (requests[0]?.data.host as { pid?: number } | undefined)?.pid;
  }

  it('the first activation is a job; once its host said it has room, the next ones are placed there without one', async () => {
    hosts = [await startHost(redis.url, ['--concurrency', '4'])];
    brood = createBrood({ runner: queueRunner({ connection: redis.url }), models: [hello] });
    const pids = [await helloOnce(brood), await helloOnce(brood), await helloOnce(brood)];
    expect(pids).toEqual([hosts[0]?.child.pid, hosts[0]?.child.pid, hosts[0]?.child.pid]);
    expect(await jobsAdded()).toBe(1);
  });

  it('a host with no room for a placed activation answers full: it is queued as a job and runs once elsewhere', async () => {
    const { Worker } = await import('bullmq');
    const [commands, blocking, jobs] = await Promise.all(
      ['fake', 'fake-channel', 'fake-jobs'].map((name) => createClient(redis.url, { name, bounded: false })),
    );
    const placed: number[] = [];
    let worker: InstanceType<typeof Worker> | undefined;
    // A host that hands its first activation back with room to spare, then is full for the one placed on it.
    const fake = new Channel(
      'hfake',
      commands!,
      blocking!,
      (endpoint) => channelKey('brood', 'brood', endpoint),
      60_000,
      {
        batch: (from, frames) => {
          for (const frame of frames as { k: string; a: number }[]) {
            if (frame.k !== 'place') continue;
            placed.push(frame.a);
            // Taking no more jobs first: the one the parent queues now is for the real host.
            void worker?.close().then(() => fake.sendBatch(from, [{ k: 'full', a: frame.a }]));
          }
        },
        broken: () => undefined,
        malformed: () => undefined,
      },
    );
    fake.start();
    worker = new Worker(
      'brood',
      async (job) => {
        const data = job.data as JobData;
        if (!isJobData(data)) return;
        const recover = { ok: false, recover: true, error: { code: 'WORKER_CRASHED', message: 'handed back' } };
        fake.sendBatch(data.parent, [
          { k: 'hello', a: data.a, host: { name: 'fake', pid: 1 } },
          { k: 'end', a: data.a, outcome: recover },
          { k: 'room', n: 3 },
        ]);
      },
      { connection: jobs!, prefix: 'brood' },
    );
    try {
      brood = createBrood({ runner: queueRunner({ connection: redis.url }), models: [hello] });
      const agent = await brood.createAgent({ model: route });
      const result = agent.run('hello');
      await until(() => placed.length === 1);
      hosts = [await startHost(redis.url)];
      expect(await result).toMatchObject({ stopReason: 'completed', output: 'hello back' });
      const requests = (await brood.sessions.read(agent.id)).events.filter((event) => event.type === 'model/request');
      expect(requests.map((request) => (request.data.host as { pid: number }).pid)).toEqual([hosts[0]?.child.pid]);
      // The job handed back, then the one the full host turned away.
      expect(await jobsAdded()).toBe(2);
      expect(placed).toHaveLength(1);
    } finally {
      await worker.close();
      await fake.close();
      await Promise.all([commands, blocking, jobs].map((client) => disconnect(client)));
    }
  });
});
