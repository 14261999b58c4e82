/**
 * queueRunner and `brood host` lifecycles: a host started after the parent, Redis unreachable (host
 * and parent) or refusing the database index (parent), a parent whose close() leaves nothing behind (a child process that must exit by
 * itself), and a host that outlives a parent and serves the next one.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Brood, createBrood } from '../../src/brood.js';
import { subagentTool } from '../../src/delegation/index.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { queueRunner } from '../../src/queue/config.js';
import { spawnProvider } from '../../src/subagents/providers.js';
import { route } from '../support/route.js';
import {
  freePort,
  type HostProcess,
  RedisServer,
  redisAvailable,
  spawnHost,
  startHost,
  stopHost,
  waitForQueuedJobs,
} from './redis-harness.js';

const models = [scriptedModels({ id: 'scripted', scripts: [{ match: 'hello', turns: [{ text: 'hello back' }] }] })];
const DIST_INDEX = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

describe.runIf(redisAvailable())('queue runner lifecycles', () => {
  let redis: RedisServer;
  let brood: Brood | undefined;
  const hosts: HostProcess[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
  });
  afterAll(async () => {
    await Promise.all(hosts.map((host) => stopHost(host)));
    await redis?.dispose();
  });

  it('queues an activation until a host starts, then runs it there', async () => {
    brood = createBrood({ models, runner: queueRunner({ connection: redis.url, queue: 'late' }) });
    const agent = await brood.createAgent({ model: route });
    const result = agent.run('hello');
    await waitForQueuedJobs(redis.url, 'late');
    const host = await startHost(redis.url, ['--queue', 'late']);
    hosts.push(host);
    expect(await result).toMatchObject({ stopReason: 'completed', output: 'hello back' });
    const [request] = (await brood.sessions.read(agent.id)).events.filter((event) => event.type === 'model/request');
    expect(request?.data.host).toMatchObject({ pid: host.child.pid });
  });

  it('brood host exits 1 with QUEUE_UNAVAILABLE when Redis is unreachable', async () => {
    const host = spawnHost(`redis://127.0.0.1:${await freePort()}`);
    expect(await host.exited).toBe(1);
    expect(host.stderr()).toContain('QUEUE_UNAVAILABLE');
    expect(host.stderr()).not.toContain('brood host ready');
  });

  it('ends a remote turn QUEUE_UNAVAILABLE when Redis is unreachable; local agents keep working', async () => {
    const dead = queueRunner({ connection: `redis://127.0.0.1:${await freePort()}` });
    brood = createBrood({
      pool: { threads: 1 },
      onDiagnostic: () => undefined,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'delegate',
              turns: [
                { toolCalls: [{ name: 'subagent', arguments: { description: 'd', prompt: 'hello' } }] },
                { text: 'after: {{results}}' },
              ],
            },
            { match: 'hello', turns: [{ text: 'hello back' }] },
          ],
        }),
      ],
      providers: [spawnProvider({ name: 'remote', runner: dead })],
    });
    brood.use(subagentTool({ provider: 'remote' }));
    const ended: { id: string; stopReason: string }[] = [];
    brood.subagents.on('end', (event) => ended.push(event));
    const parent = await brood.createAgent({ model: route });
    const result = await parent.run('delegate');
    expect(result.stopReason).toBe('completed');
    expect(ended).toHaveLength(1);
    expect(ended[0]?.stopReason).toBe('error');
    const turnEnd = (await brood.sessions.read(ended[0]!.id)).events.find((event) => event.type === 'turn/end');
    expect(String(turnEnd?.data.diagnostic)).toMatch(/^QUEUE_UNAVAILABLE:/);
    // The accepted message is in the child's session (sessions are the parent's).
    const accepted = (await brood.sessions.read(ended[0]!.id)).events.filter((event) => event.type === 'user/message');
    expect(accepted).toHaveLength(1);
    const local = await brood.createAgent({ model: route });
    expect((await local.run('hello')).output).toBe('hello back');
  });

  it('ends a remote turn QUEUE_UNAVAILABLE when Redis refuses the database the URL names (/99), like brood host', async () => {
    brood = createBrood({
      models,
      onDiagnostic: () => undefined,
      runner: queueRunner({ connection: `${redis.url}/99`, queue: 'wrongdb' }),
    });
    const agent = await brood.createAgent({ model: route });
    expect((await agent.run('hello')).stopReason).toBe('error');
    const turnEnd = (await brood.sessions.read(agent.id)).events.find((event) => event.type === 'turn/end');
    expect(String(turnEnd?.data.diagnostic)).toMatch(/^QUEUE_UNAVAILABLE:.*database 99/);
  });

  it('close() leaves no Redis connection or handle; the host outlives the parent and serves the next one', async () => {
    const host = await startHost(redis.url, ['--queue', 'exit']);
    hosts.push(host);
    const dir = mkdtempSync(join(tmpdir(), 'brood-exit-'));
    const script = join(dir, 'parent.mjs');
    writeFileSync(
      script,
      [
        `import { createBrood, queueRunner, scriptedModels } from ${JSON.stringify(DIST_INDEX)};`,
        `const brood = createBrood({ runner: queueRunner({ connection: ${JSON.stringify(redis.url)}, queue: 'exit' }),`,
        `  models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'hello', turns: [{ text: 'hello back' }] }] })] });`,
        `const agent = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });`,
        'const result = await agent.run("hello");',
        'await brood.close();',
        'process.stdout.write(result.output);',
        // No process.exit(): the process must end because nothing holds it open.
      ].join('\n'),
    );
    try {
      for (const round of [1, 2]) {
        const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
        expect({ round, code, out }).toEqual({ round, code: 0, out: 'hello back' });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(host.child.exitCode).toBeNull();
  });

  it('a parent killed mid-activation: the host drops its activation after the timeout and serves the next parent', async () => {
    // One slot: the next parent's job can only run once the dead parent's activation was dropped.
    const host = await startHost(redis.url, ['--queue', 'crash', '--concurrency', '1']);
    hosts.push(host);
    const dir = mkdtempSync(join(tmpdir(), 'brood-crash-'));
    const script = join(dir, 'parent.mjs');
    writeFileSync(
      script,
      [
        `import { createBrood, defineTool, queueRunner, scriptedModels } from ${JSON.stringify(DIST_INDEX)};`,
        `const brood = createBrood({ runner: queueRunner({ connection: ${JSON.stringify(redis.url)}, queue: 'crash', activationTimeoutMs: 1000 }),`,
        "  models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'block', turns: [{ toolCalls: [{ name: 'wait', arguments: {} }] }] }] })] });",
        "brood.tools.register(defineTool({ name: 'wait', description: 'w', parameters: { type: 'object', properties: {} },",
        "  execute: () => { process.stdout.write('in-tool'); return new Promise(() => {}); } }));",
        "const agent = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });",
        "await agent.run('block');",
      ].join('\n'),
    );
    try {
      const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('in-tool') && resolve()),
      );
      child.kill('SIGKILL');
      await exited;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    brood = createBrood({ models, runner: queueRunner({ connection: redis.url, queue: 'crash' }) });
    const agent = await brood.createAgent({ model: route });
    expect(await agent.run('hello')).toMatchObject({ stopReason: 'completed', output: 'hello back' });
    expect(host.child.exitCode).toBeNull();
  });
});

describe('lazy loading', () => {
  it('a runtime that never dispatches remotely never loads bullmq or ioredis (a queueRunner config alone loads nothing)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brood-lazy-'));
    const script = join(dir, 'lazy.mjs');
    writeFileSync(
      script,
      [
        "import { createRequire } from 'node:module';",
        `import { createBrood, queueRunner, scriptedModels, spawnProvider } from ${JSON.stringify(DIST_INDEX)};`,
        "const remote = queueRunner({ connection: 'redis://127.0.0.1:1' });",
        "const brood = createBrood({ pool: { threads: 1 }, providers: [spawnProvider({ name: 'remote', runner: remote })] });",
        "const agent = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });",
        "await agent.run('hi');",
        'await brood.close();',
        `const require = createRequire(${JSON.stringify(DIST_INDEX)});`,
        'const loaded = () => Object.keys(require.cache).filter((key) => /node_modules[\\\\/](bullmq|ioredis)[\\\\/]/.test(key)).length;',
        'const before = loaded();',
        "await import(require.resolve('ioredis'));",
        'process.stdout.write(JSON.stringify({ before, after: loaded() > 0 }));',
      ].join('\n'),
    );
    try {
      const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
      // `after` proves the probe sees a loaded package at all.
      expect(JSON.parse(out)).toEqual({ before: 0, after: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
