/**
 * What a host loads, against someone who can write to Redis, with and without a secret: a host never
 * imports adapter code a config in Redis names. A forged `models:<hash>` record holding a `module`
 * provider whose moduleUrl is a `data:` URL (a module that writes a marker file when imported), named
 * by a forged job, never runs; a config record altered under its key is refused; a module provider
 * listed in the host's own `--config` runs with the parent's options; one it does not list ends the
 * activation INVALID_CONFIG.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBrood } from '../../src/brood.js';
import { moduleAdapter } from '../../src/models/module.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { queueRunner } from '../../src/queue/config.js';
import type { JobData } from '../../src/queue/job.js';
import { modelsRecord } from '../../src/queue/record-seal.js';
import { channelKey, createClient, disconnect, modelsKey, type RedisClient } from '../../src/queue/redis.js';
import { route } from '../support/route.js';
import { assertBuilt } from '../support/run-cli.js';
import { until } from '../support/until.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

const SECRET_ENV = 'BROOD_TEST_HOST_CODE_SECRET';
const SECRET = 'host-code-secret-for-the-test-0123';
const HOST_CONFIG = fileURLToPath(new URL('./fixtures/host-config.json', import.meta.url));
const GREETING_ADAPTER = new URL('./fixtures/greeting-adapter.mjs', import.meta.url).href;

/** A module that writes `marker` when imported, as a `data:` URL. */
function markerModuleUrl(marker: string): string {
  const source = [
    "import { writeFileSync } from 'node:fs';",
    `writeFileSync(${JSON.stringify(marker)}, 'imported');`,
    'export function createAdapter() {',
    "  return { request: async () => ({ text: 'owned', toolCalls: [], finish: 'stop', usage: { inputTokens: 1, outputTokens: 1 } }) };",
    '}',
  ].join('\n');
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

/** The configs a forger writes: a `module` provider under the id the plan routes to, loading the marker module. */
function forgedConfigsJson(marker: string): string {
  return JSON.stringify([
    {
      kind: 'module',
      id: route.provider,
      name: 'forged',
      models: [{ id: route.model, efforts: [] }],
      acceptsUnlistedModels: true,
      options: {},
      moduleUrl: markerModuleUrl(marker),
    },
  ]);
}

describe.runIf(redisAvailable()).each([
  { mode: 'without a secret', secret: undefined, refusal: 'do not match their hash; refused' },
  { mode: 'with a secret', secret: SECRET, refusal: 'failed authentication; refused' },
])('brood host loads no code named in Redis ($mode)', ({ secret, refusal }) => {
  let redis: RedisServer;
  let host: HostProcess;
  let raw: RedisClient;
  let queues: Queue[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'brood-host-code-'));
  let captures = 0;

  beforeAll(async () => {
    assertBuilt();
    redis = await RedisServer.start();
    const secretArgs = secret === undefined ? [] : ['--secret-env', SECRET_ENV];
    host = await startHost(redis.url, ['--config', HOST_CONFIG, ...secretArgs], { [SECRET_ENV]: SECRET });
    raw = await createClient(redis.url, { name: 'forger', bounded: false });
  });
  afterEach(async () => {
    await Promise.all(queues.map((queue) => queue.close()));
    queues = [];
  });
  afterAll(async () => {
    await disconnect(raw);
    await stopHost(host);
    await redis?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const runner = (queue = 'brood') => queueRunner({ connection: redis.url, queue, ...(secret ? { secret } : {}) });

  async function queueNamed(name: string): Promise<Queue> {
    const { Queue } = await import('bullmq');
    const queue = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port }, prefix: 'brood' });
    queues.push(queue);
    return queue;
  }

  /**
   * A real job, as a parent queued it (sealed with the secret when there is one), taken from a queue no
   * host serves. Each capture's configs differ, so no host has read them before.
   */
  async function capturedJob(): Promise<JobData> {
    captures += 1;
    const queue = `capture${captures}`;
    const brood = createBrood({
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'hello', turns: [{ text: `capture ${captures}` }] }] }),
      ],
      runner: runner(queue),
    });
    try {
      const agent = await brood.createAgent({ model: route });
      void agent.run('hello').catch(() => undefined);
      const waiting = await queueNamed(queue);
      let job: JobData | undefined;
      await until(async () => {
        job = (await waiting.getWaiting())[0]?.data as JobData | undefined;
        return job !== undefined;
      });
      return job as JobData;
    } finally {
      await brood.close();
    }
  }

  /** Queues `data` for the host as a forger would, and waits until the host is done with it. */
  async function forge(data: JobData): Promise<void> {
    const queue = await queueNamed('brood');
    const job = await queue.add('activation', data, { removeOnComplete: false, removeOnFail: false });
    await until(async () => ['completed', 'failed'].includes(await job.getState()));
  }

  it('a forged job naming forged configs with a data: URL module: the module is never imported', async () => {
    const marker = join(dir, 'forged-job');
    const captured = await capturedJob();
    const forged = modelsRecord(forgedConfigsJson(marker), undefined);
    await raw.set(modelsKey('brood', 'brood', forged.hash), forged.body);
    const parent = `p${'f'.repeat(32)}`;
    // With a secret the parent's mac stays on the job: it no longer matches what the job says.
    await forge({ ...captured, parent, models: forged.hash });
    expect(existsSync(marker)).toBe(false);
    if (secret === undefined) {
      // Unsealed jobs are trusted without a secret: the activation ran, and ended before loading anything.
      // Its end frame goes out on the host's channel connection, batched, and BullMQ completes the job on
      // another connection: the job can read completed before the frame is in Redis. So it is awaited.
      const ended = async () =>
        (await raw.lrange(channelKey('brood', 'brood', parent), 0, -1)).join('\n').includes('INVALID_CONFIG');
      await until(ended);
      expect(existsSync(marker)).toBe(false);
    } else {
      expect(host.stderr()).toMatch(/job \S+ failed authentication; dropped/);
    }
  });

  it("a parent's job whose config record was altered under its key: refused, nothing imported", async () => {
    const marker = join(dir, 'altered-record');
    const captured = await capturedJob();
    await raw.set(modelsKey('brood', 'brood', captured.models), forgedConfigsJson(marker));
    await forge(captured);
    expect(existsSync(marker)).toBe(false);
    expect(host.stderr()).toContain(`models:${captured.models} ${refusal}`);
  });

  it("a module provider the host's --config lists runs there, with the parent's options", async () => {
    const brood = createBrood({
      models: [
        moduleAdapter({ id: 'greeter', models: ['g'], options: { greeting: 'hello' }, moduleUrl: GREETING_ADAPTER }),
      ],
      runner: runner(),
    });
    try {
      const agent = await brood.createAgent({ model: { provider: 'greeter', model: 'g' } });
      const result = await agent.run('greet');
      expect(result.stopReason).toBe('completed');
      expect(result.output).toBe('hello from greeter');
    } finally {
      await brood.close();
    }
  });

  it('a module provider the host does not list: the activation ends INVALID_CONFIG, its module not loaded', async () => {
    const marker = join(dir, 'unlisted');
    const brood = createBrood({
      models: [moduleAdapter({ id: 'unlisted', models: ['u'], moduleUrl: markerModuleUrl(marker) })],
      runner: runner(),
    });
    try {
      const agent = await brood.createAgent({ model: { provider: 'unlisted', model: 'u' } });
      const result = await agent.run('greet');
      expect(result.stopReason).toBe('error');
      expect(result.diagnostic).toMatch(/^INVALID_CONFIG: model provider 'unlisted'/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await brood.close();
    }
  });
});
