/**
 * queueRunner under faults: a host killed with SIGKILL mid-fan-out, and a Redis restart (which loses
 * everything it held). Every child must complete; every tool body runs exactly once (in the parent);
 * every accepted message runs exactly one turn. The activation timeout is short so recovery is quick;
 * nothing here asserts a duration.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Brood, createBrood } from '../../src/brood.js';
import { subagentTool } from '../../src/delegation/index.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { queueRunner } from '../../src/queue/config.js';
import { spawnProvider } from '../../src/subagents/providers.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { fanOutScript } from '../support/fan-out.js';
import { route } from '../support/route.js';
import {
  type HostProcess,
  RedisServer,
  redisAvailable,
  startHost,
  stopHost,
  waitForQueuedJobs,
} from './redis-harness.js';

interface FanOut {
  brood: Brood;
  children: string[];
  counts: Map<string, number>;
  /** Resolves once every child's tool body is running (they then wait for `release`). */
  allRunning: Promise<void>;
  release(): void;
}

function fanOut(url: string, n: number): FanOut {
  const counts = new Map<string, number>();
  let running!: () => void;
  const allRunning = new Promise<void>((resolve) => (running = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const brood = createBrood({
    maxParallelToolCalls: n,
    pool: { threads: 1 },
    onDiagnostic: () => undefined,
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          fanOutScript(n),
          {
            match: 'child',
            turns: [{ toolCalls: [{ name: 'once', arguments: {} }] }, { text: '{{prompt}}: {{results}}' }],
          },
        ],
      }),
    ],
    providers: [
      spawnProvider({ name: 'remote', runner: queueRunner({ connection: url, activationTimeoutMs: 1_500 }) }),
    ],
  });
  brood.tools.register(
    defineTool({
      name: 'once',
      description: 'must run exactly once per call',
      parameters: { type: 'object', properties: {} },
      concurrencySafe: true,
      execute: async (_args, ctx) => {
        const key = `${ctx.agent?.id} ${ctx.callId}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        if (counts.size === n) running();
        await released;
        return 'ran';
      },
    }),
  );
  brood.use(subagentTool({ provider: 'remote' }));
  const children: string[] = [];
  brood.subagents.on('start', (event) => children.push(event.id));
  return { brood, children, counts, allRunning, release };
}

async function expectExactlyOnce(run: FanOut, n: number): Promise<Set<number>> {
  expect(run.counts.size).toBe(n);
  expect(Math.max(...run.counts.values())).toBe(1);
  const pids = new Set<number>();
  for (const id of run.children) {
    const events = (await run.brood.sessions.read(id)).events;
    const ofType = (type: string) => events.filter((event) => event.type === type);
    expect(ofType('user/message')).toHaveLength(1);
    expect(ofType('turn/end').map((event) => event.data.reason)).toEqual(['completed']);
    expect(ofType('tool/call')).toHaveLength(1);
    expect(ofType('tool/result').map((event) => event.data.content)).toEqual(['ran']);
    for (const request of ofType('model/request')) pids.add((request.data.host as { pid: number }).pid);
  }
  return pids;
}

describe.runIf(redisAvailable())('queueRunner faults', () => {
  let redis: RedisServer;
  let hosts: HostProcess[] = [];
  let run: FanOut | undefined;

  beforeEach(async () => {
    redis = await RedisServer.start();
  });
  afterEach(async () => {
    await run?.brood.close();
    run = undefined;
    await Promise.all(hosts.map((host) => stopHost(host)));
    hosts = [];
    await redis.dispose();
  });

  it.each([
    ['killed with SIGKILL', 'SIGKILL', null],
    ['stopped with SIGTERM (it hands its activations back)', 'SIGTERM', 0],
  ] as const)(
    'a host %s mid-fan-out: its children are re-planned onto the other host, nothing runs twice',
    async (_label, signal, exitCode) => {
      const N = signal === 'SIGKILL' ? 40 : 10;
      hosts = await Promise.all([0, 1].map(() => startHost(redis.url, ['--concurrency', String(N / 2)])));
      const [victim, survivor] = hosts as [HostProcess, HostProcess];
      run = fanOut(redis.url, N);
      const parent = await run.brood.createAgent({ model: route });
      const result = parent.run('fan out');
      // Every child's tool call is in flight: each host holds exactly N/2 drivers, waiting on the parent.
      await run.allRunning;
      victim.child.kill(signal);
      expect(await victim.exited).toBe(exitCode);
      run.release();
      const ended = await result;
      expect(ended.stopReason).toBe('completed');
      const pids = await expectExactlyOnce(run, N);
      expect(pids).toEqual(new Set([victim.child.pid, survivor.child.pid]));
      // The killed host's children finished on the survivor (their model requests re-issued there).
      for (const id of run.children) {
        const requests = (await run.brood.sessions.read(id)).events.filter((event) => event.type === 'model/request');
        expect(requests.at(-1)?.data.host).toMatchObject({ pid: survivor.child.pid });
      }
    },
  );

  it('a Redis restart mid-fan-out (everything it held is lost): every child completes, nothing runs twice', async () => {
    const N = 20;
    hosts = [await startHost(redis.url)];
    run = fanOut(redis.url, N);
    const parent = await run.brood.createAgent({ model: route });
    const result = parent.run('fan out');
    await run.allRunning;
    await redis.stop('SIGKILL');
    await redis.boot();
    run.release();
    const ended = await result;
    expect(ended.stopReason).toBe('completed');
    await expectExactlyOnce(run, N);
    const host = hosts[0]!;
    expect(host.child.exitCode).toBeNull();
    // The host's jobs were lost with Redis: finishing each fails in BullMQ. The host says so once,
    // not once (or twice) per job. Its stderr is complete once it has exited.
    while (!/Missing key|no longer has the jobs/.test(host.stderr())) await new Promise((r) => setTimeout(r, 20));
    await stopHost(host);
    const lines = host.stderr().split('\n');
    expect(lines.filter((line) => line.includes('Missing key'))).toEqual([]);
    expect(lines.filter((line) => line.includes('no longer has the jobs this host was running'))).toHaveLength(1);
  });

  /**
   * One remote 'hello' turn with a short activation timeout: `disturb` runs once the turn is queued
   * and must leave a host to serve it. The turn runs exactly once; its model request's host is returned.
   */
  async function helloRunsOnce(disturb: () => Promise<void>): Promise<unknown> {
    const brood = createBrood({
      onDiagnostic: () => undefined,
      runner: queueRunner({ connection: redis.url, activationTimeoutMs: 1_000 }),
      models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'hello', turns: [{ text: 'hello back' }] }] })],
    });
    try {
      const agent = await brood.createAgent({ model: route });
      const result = agent.run('hello');
      await disturb();
      expect(await result).toMatchObject({ stopReason: 'completed', output: 'hello back' });
      const events = (await brood.sessions.read(agent.id)).events;
      expect(events.filter((event) => event.type === 'user/message')).toHaveLength(1);
      const requests = events.filter((event) => event.type === 'model/request');
      expect(requests).toHaveLength(1);
      return requests[0]?.data.host;
    } finally {
      await brood.close();
    }
  }

  it('an activation whose queued job a Redis restart lost is queued again and runs', async () => {
    await helloRunsOnce(async () => {
      await waitForQueuedJobs(redis.url, 'brood');
      await redis.stop('SIGKILL');
      await redis.boot();
      hosts = [await startHost(redis.url)];
    });
  });

  it('a host that takes a job and goes silent before its hello: the activation is re-planned and runs once on a healthy host', async () => {
    const [{ Worker }, { Redis }] = await Promise.all([import('bullmq'), import('ioredis')]);
    let taken!: () => void;
    const tookIt = new Promise<void>((resolve) => (taken = resolve));
    // Takes the job and never answers, while its BullMQ lock keeps being renewed: a wedged host.
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const wedged = new Worker(
      'brood',
      async () => {
        taken();
        await new Promise(() => undefined);
      },
      { connection, prefix: 'brood' },
    );
    try {
      const host = await helloRunsOnce(async () => {
        await tookIt;
        hosts = [await startHost(redis.url)];
      });
      expect(host).toMatchObject({ pid: hosts[0]?.child.pid });
    } finally {
      await wedged.close(true);
      connection.disconnect();
    }
  });

  it('a stalled host (SIGSTOP) is replaced; when it comes back it cannot act for activations the parent moved on', async () => {
    const N = 8;
    hosts = await Promise.all([0, 1].map(() => startHost(redis.url, ['--concurrency', String(N / 2)])));
    const [stale, survivor] = hosts as [HostProcess, HostProcess];
    run = fanOut(redis.url, N);
    const parent = await run.brood.createAgent({ model: route });
    const result = parent.run('fan out');
    await run.allRunning;
    stale.child.kill('SIGSTOP');
    // The survivor is full (N/2), so the stalled host's re-planned children wait in the queue.
    await waitForQueuedJobs(redis.url, 'brood', N / 2);
    stale.child.kill('SIGCONT');
    run.release();
    expect((await result).stopReason).toBe('completed');
    const pids = await expectExactlyOnce(run, N);
    expect(pids).toEqual(new Set([stale.child.pid, survivor.child.pid]));
    // Back in service: the stale host serves the next parent.
    await survivor.child.kill('SIGTERM');
    await survivor.exited;
    const next = createBrood({
      runner: queueRunner({ connection: redis.url }),
      models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'hello', turns: [{ text: 'hello back' }] }] })],
    });
    try {
      const agent = await next.createAgent({ model: route });
      expect((await agent.run('hello')).output).toBe('hello back');
      const [request] = (await next.sessions.read(agent.id)).events.filter((event) => event.type === 'model/request');
      expect(request?.data.host).toMatchObject({ pid: stale.child.pid });
    } finally {
      await next.close();
    }
  });
});
