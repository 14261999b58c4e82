/**
 * queueRunner end to end: a real Redis, real `brood host` child processes, the parent the one
 * resolver. Tool bodies are closures of this test process: counting their calls here is observing
 * them in the parent's process (a host could not run them: it never has them).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Brood, createBrood } from '../../src/brood.js';
import { subagentTool } from '../../src/delegation/index.js';
import { openAICompatible } from '../../src/models/openai.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { queueRunner } from '../../src/queue/config.js';
import { memorySessions } from '../../src/sessions/memory.js';
import { spawnProvider } from '../../src/subagents/providers.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { SessionEvent } from '../../src/types.js';
import { expectCode } from '../support/codes.js';
import { route } from '../support/route.js';
import { until } from '../support/until.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

/** A tool `tick` that holds each call 30 ms; `seen` has the call ids and the most calls in flight at once. */
function tickTool() {
  const seen = { peak: 0, running: 0, callIds: [] as string[] };
  const tool = defineTool({
    name: 'tick',
    description: 'counts concurrency',
    parameters: { type: 'object', properties: { v: { type: 'number' } } },
    concurrencySafe: true,
    execute: async ({ v }: { v: number }, ctx) => {
      seen.callIds.push(ctx.callId);
      seen.peak = Math.max(seen.peak, ++seen.running);
      await new Promise((resolve) => setTimeout(resolve, 30));
      seen.running -= 1;
      return `t${v}`;
    },
  });
  return { tool, seen };
}
const subagent = (prompt: string) => ({ name: 'subagent', arguments: { description: `task ${prompt}`, prompt } });

describe.runIf(redisAvailable())('queueRunner with brood host processes', () => {
  let redis: RedisServer;
  let hosts: HostProcess[] = [];
  let brood: Brood | undefined;

  beforeAll(async () => {
    redis = await RedisServer.start();
    hosts = await Promise.all([
      startHost(redis.url, ['--concurrency', '100']),
      startHost(redis.url, ['--concurrency', '100']),
    ]);
  });
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
  });
  afterAll(async () => {
    await Promise.all(hosts.map((host) => stopHost(host)));
    await redis?.dispose();
  });

  const modelRequests = async (id: string): Promise<SessionEvent[]> =>
    (await brood!.sessions.read(id)).events.filter((event) => event.type === 'model/request');

  it('runs a child on a host: the plan after setup there, every tool call back in the parent', async () => {
    const calls: string[] = [];
    brood = createBrood({
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            { match: 'delegate', turns: [{ toolCalls: [subagent('child one')] }, { text: 'parent: {{results}}' }] },
            {
              match: 'child',
              turns: [{ toolCalls: [{ name: 'lookup', arguments: { q: 'x' } }] }, { text: 'child saw {{results}}' }],
            },
          ],
        }),
      ],
      pool: { threads: 1 },
      providers: [spawnProvider({ name: 'remote', runner: queueRunner({ connection: redis.url }) })],
    });
    brood.tools.register(
      defineTool({
        name: 'lookup',
        description: 'looks up',
        parameters: { type: 'object', properties: { q: { type: 'string' } } },
        execute: (_args, ctx) => {
          calls.push(ctx.callId);
          return `answer from pid ${process.pid}`;
        },
      }),
    );
    brood.use(subagentTool({ provider: 'remote' }));
    const children: string[] = [];
    brood.subagents.on('start', (event) => children.push(event.id));
    const parent = await brood.createAgent({ model: route });
    const result = await parent.run('delegate');
    expect(result.stopReason).toBe('completed');
    expect(result.output).toBe(`parent: child saw answer from pid ${process.pid}`);
    expect(calls).toHaveLength(1);
    const runId = children[0];
    expect(children).toHaveLength(1);
    const requests = await modelRequests(runId!);
    const hostPids = hosts.map((host) => host.child.pid);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      const host = request.data.host as { name: string; pid: number };
      expect(hostPids).toContain(host.pid);
      expect(typeof host.name).toBe('string');
    }
    // The parent's own driver ran locally: no host recorded.
    for (const request of await modelRequests(parent.id)) expect(request.data.host).toBeUndefined();
    const descriptor = (await brood.sessions.read(runId!)).events.find((event) => event.type === 'subagent/descriptor');
    expect(descriptor?.data.runner).toBe('queue');
  });

  it('fans 200 children out across both hosts; every tool body runs once, in the parent', async () => {
    const N = 200;
    const counts = new Map<string, number>();
    // A barrier: no child's tool call returns before all of them are running. Each host holds at
    // most 100 activations, so both hosts must be serving children at once.
    let release!: () => void;
    const allIn = new Promise<void>((resolve) => (release = resolve));
    brood = createBrood({
      maxParallelToolCalls: N,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'fan out',
              turns: [{ toolCalls: Array.from({ length: N }, (_, i) => subagent(`child ${i}`)) }, { text: 'all done' }],
            },
            { match: 'child', turns: [{ toolCalls: [{ name: 'work', arguments: {} }] }, { text: 'ok {{results}}' }] },
          ],
        }),
      ],
      pool: { threads: 1 },
      providers: [spawnProvider({ name: 'remote', runner: queueRunner({ connection: redis.url }) })],
    });
    brood.tools.register(
      defineTool({
        name: 'work',
        description: 'waits for every sibling',
        parameters: { type: 'object', properties: {} },
        concurrencySafe: true,
        execute: async (_args, ctx) => {
          const key = `${ctx.agent?.id} ${ctx.callId}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
          if (counts.size === N) release();
          await allIn;
          return 'w';
        },
      }),
    );
    brood.use(subagentTool({ provider: 'remote' }));
    const children: string[] = [];
    brood.subagents.on('start', (event) => children.push(event.id));
    const parent = await brood.createAgent({ model: route });
    const result = await parent.run('fan out');
    expect(result.stopReason).toBe('completed');
    expect(counts.size).toBe(N);
    expect(Math.max(...counts.values())).toBe(1);
    const results = (await brood.sessions.read(parent.id)).events.filter((event) => event.type === 'tool/result');
    expect(results.map((event) => event.data.content)).toEqual(Array.from({ length: N }, () => 'ok w'));
    const pids = new Set<number>();
    for (const id of children)
      for (const request of await modelRequests(id)) pids.add((request.data.host as { pid: number }).pid);
    expect([...pids].sort()).toEqual(hosts.map((host) => host.child.pid!).sort());
  });

  it('cancels a remote turn, and keeps maxParallelToolCalls for a remote driver', async () => {
    brood = createBrood({
      maxParallelToolCalls: 2,
      runner: queueRunner({ connection: redis.url }),
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            { match: 'slow', latencyMs: 60_000, turns: [{ text: 'never' }] },
            {
              match: 'six',
              turns: [
                { toolCalls: Array.from({ length: 6 }, (_, v) => ({ name: 'tick', arguments: { v } })) },
                { text: '{{results}}' },
              ],
            },
          ],
        }),
      ],
    });
    const tick = tickTool();
    brood.tools.register(tick.tool);
    const agent = await brood.createAgent({ model: route });
    const six = await agent.run('six');
    expect(six.stopReason).toBe('completed');
    expect(six.output).toBe('t0\nt1\nt2\nt3\nt4\nt5');
    expect(tick.seen.peak).toBe(2);

    const sleeper = await brood.createAgent({ model: route });
    const slow = sleeper.run('slow');
    // Cancel once the remote driver has asked the model (its request is logged in the parent).
    await until(async () => (await modelRequests(sleeper.id)).length >= 1);
    sleeper.cancel();
    const cancelled = await slow;
    expect(cancelled.stopReason).toBe('aborted');
  });

  it('runs run_code on a host: calls from inside the program come back to the parent, bounded there', async () => {
    const code = 'const r = await Promise.all([0, 1, 2, 3, 4].map((v) => tools.tick({ v }))); return r.join();';
    brood = createBrood({
      codeMode: 'code',
      maxParallelToolCalls: 2,
      runner: queueRunner({ connection: redis.url }),
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'code',
              turns: [
                { toolCalls: [{ name: 'run_code', arguments: { description: 'd', code } }] },
                { text: '{{results}}' },
              ],
            },
          ],
        }),
      ],
    });
    const tick = tickTool();
    brood.tools.register(tick.tool);
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('code');
    expect(result).toMatchObject({ stopReason: 'completed', output: 't0,t1,t2,t3,t4' });
    expect(tick.seen.peak).toBe(2);
    expect(tick.seen.callIds.sort()).toEqual([1, 2, 3, 4, 5].map((n) => `call_0_0:code:${n}`));
    const [request] = await modelRequests(agent.id);
    expect(hosts.map((host) => host.child.pid)).toContain((request!.data.host as { pid: number }).pid);
  });

  it('mixes local and remote providers in one tree', async () => {
    brood = createBrood({
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'both',
              turns: [
                {
                  toolCalls: [
                    { name: 'local_agent', arguments: { description: 'l', prompt: 'child local' } },
                    { name: 'remote_agent', arguments: { description: 'r', prompt: 'child remote' } },
                  ],
                },
                { text: '{{results}}' },
              ],
            },
            { match: 'child', turns: [{ text: 'hi from {{prompt}}' }] },
          ],
        }),
      ],
      pool: { threads: 1 },
      providers: [spawnProvider(), spawnProvider({ name: 'remote', runner: queueRunner({ connection: redis.url }) })],
    });
    brood.use(subagentTool({ toolName: 'local_agent', provider: 'spawn' }));
    brood.use(subagentTool({ toolName: 'remote_agent', provider: 'remote' }));
    const started = new Map<string, string>();
    brood.subagents.on('start', (event) => started.set(event.provider, event.id));
    const parent = await brood.createAgent({ model: route });
    const result = await parent.run('both');
    expect(result.output).toBe('hi from child local\nhi from child remote');
    const [local] = await modelRequests(started.get('spawn')!);
    const [remote] = await modelRequests(started.get('remote')!);
    expect(local?.data.host).toBeUndefined();
    expect(hosts.map((host) => host.child.pid)).toContain((remote?.data.host as { pid: number } | undefined)?.pid);
  });

  it('refuses provider configs with an inline apiKey for remote drivers (use apiKeyEnv)', () => {
    const error = expectCode(
      () =>
        createBrood({
          runner: queueRunner({ connection: redis.url }),
          models: [
            openAICompatible({
              id: 'keyed',
              baseURL: 'http://127.0.0.1:9/v1',
              apiKey: 'sk-secret',
              models: [{ id: 'm' }],
            }),
          ],
        }),
      'INVALID_CONFIG',
    );
    expect(error.message).toContain('use apiKeyEnv');
    expectCode(() => queueRunner({ connection: 'http://nope' }), 'INVALID_CONFIG');
    expectCode(() => queueRunner({ connection: redis.url, activationTimeoutMs: 10 }), 'INVALID_CONFIG');
  });

  it('a continuable child of a remote provider resumed by another runtime goes back to the hosts', async () => {
    const sessions = memorySessions();
    const remote = queueRunner({ connection: redis.url });
    const options = {
      sessions,
      pool: { threads: 1 },
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'first', turns: [{ text: 'one' }, { text: 'two' }] }] }),
      ],
      providers: [spawnProvider({ name: 'remote', runner: remote })],
    };
    brood = createBrood(options);
    const parent = await brood.createAgent({ model: route });
    const { childId } = await brood.subagents.startContinuable({
      provider: 'remote',
      label: 'helper',
      request: { parent, prompt: 'first' },
      signal: new AbortController().signal,
    });
    const child = await brood.resumeAgent(childId);
    await child.whenIdle();
    await brood.close();
    brood = createBrood(options);
    const resumed = await brood.resumeAgent(childId);
    expect((await resumed.run('again')).output).toBe('two');
    const requests = await modelRequests(childId);
    expect(requests).toHaveLength(2);
    for (const request of requests)
      expect(hosts.map((host) => host.child.pid)).toContain((request.data.host as { pid?: number } | undefined)?.pid);
  });

  it('carries the event stream: the subscriber flag reaches the host, text deltas come back', async () => {
    brood = createBrood({
      runner: queueRunner({ connection: redis.url }),
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'talk', turns: [{ text: 'words from a host' }] }] }),
      ],
    });
    const stream = brood.events()[Symbol.asyncIterator]();
    const agent = await brood.createAgent({ model: route });
    void agent.run('talk');
    const deltas: string[] = [];
    for (;;) {
      const { value, done } = await stream.next();
      if (done) break;
      if (value.agentId !== agent.id) continue;
      if (value.type === 'text-delta') deltas.push(value.delta);
      if (value.type === 'turn-end') break;
    }
    await stream.return?.();
    expect(deltas.join('')).toBe('words from a host');
    expect(deltas.length).toBeGreaterThan(1);
  });
});
