/**
 * `pool.threads` is bounded and lazy: createBrood starts no thread whatever the pool
 * size; the first run starts the warm set (one thread per core, at most `threads`); load adds threads
 * up to `threads`; an idle thread above the warm set goes after `idleTimeoutMs`; close() leaves none.
 * Threads are counted as the OS sees them (/proc/self/task: one per worker thread), so these run on Linux.
 */
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/defaults.js';
import type { Agent, Brood } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { deferred } from '../../support/deferred.js';
import { eventsOf, ofType } from '../../support/events.js';
import { route } from '../../support/route.js';

const cores = Math.max(1, availableParallelism());
const onLinux = existsSync('/proc/self/task');

function osThreads(): number {
  return readdirSync('/proc/self/task').length;
}

/** Polls until the process runs `expected` OS threads (threads exit asynchronously after terminate). */
async function threadsSettleAt(expected: number): Promise<number> {
  for (let waited = 0; waited < 10_000 && osThreads() !== expected; waited += 20) await sleep(20);
  return osThreads();
}

/** The thread an agent's first model request ran on, once it has been made. */
async function firstRequestThread(brood: Brood, agent: Agent): Promise<number> {
  for (;;) {
    const [request] = ofType(await eventsOf(brood, agent.id), 'model/request');
    if (request) return request.data.threadId as number;
    await sleep(10);
  }
}

let brood: Brood | undefined;
let baseline = 0;
beforeAll(async () => {
  // The parent's libuv pool starts its threads on the first fs call; start them before the baseline.
  await readFile(import.meta.filename);
});
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

describe('pool.threads', () => {
  it(`is refused above ${DEFAULTS.maxPoolThreads} with INVALID_CONFIG; the maximum itself is accepted`, async () => {
    for (const threads of [DEFAULTS.maxPoolThreads + 1, 1e6]) {
      const error = expectCode(() => createBrood({ pool: { threads } }), 'INVALID_CONFIG');
      expect(error.details?.keys).toEqual(['pool.threads']);
    }
    brood = createBrood({ pool: { threads: DEFAULTS.maxPoolThreads } });
    const agent = await brood.createAgent({ model: route });
    expect((await agent.run('hello')).stopReason).toBe('completed');
  });

  it.runIf(onLinux)(
    'createBrood({ pool: { threads: 64 } }) starts no thread until an agent runs; close() ends them all',
    async () => {
      baseline = osThreads();
      brood = createBrood({ pool: { threads: 64 } });
      expect(osThreads()).toBe(baseline);
      const agent = await brood.createAgent({ model: route });
      await sleep(50);
      expect(osThreads()).toBe(baseline);

      expect((await agent.run('hello')).stopReason).toBe('completed');
      // One agent needs one thread; the first need starts the warm set (one per core) and nothing more.
      expect(osThreads() - baseline).toBe(Math.min(64, cores));

      await brood.close();
      brood = undefined;
      expect(await threadsSettleAt(baseline)).toBe(baseline);
    },
  );

  it.runIf(onLinux)(
    'load adds threads up to pool.threads, never more, and an idle one above the warm set goes again',
    async () => {
      const threads = cores + 1;
      baseline = osThreads();
      brood = createBrood({
        pool: { threads, idleTimeoutMs: 200 },
        models: [
          scriptedModels({
            id: 'scripted',
            scripts: [{ match: 'hold', turns: [{ toolCalls: [{ name: 'hold', arguments: {} }] }, { text: 'done' }] }],
          }),
        ],
      });
      // Every driver stays on its thread, waiting for this tool, until the test lets them all go.
      const release = deferred();
      brood.tools.register(
        defineTool({
          name: 'hold',
          description: 'waits',
          parameters: { type: 'object' },
          execute: () => release.promise,
        }),
      );
      // Agents start one after another until one lands on a thread beyond the warm set (every thread busy
      // and none booting starts one more; the agents placed while it boots go to the busy ones).
      const seen = new Set<number>();
      const runs: Promise<unknown>[] = [];
      for (let started = 0; seen.size < threads && started < 100; started++) {
        const agent = await brood.createAgent({ model: route });
        runs.push(agent.run('hold'));
        seen.add(await firstRequestThread(brood, agent));
        expect(osThreads() - baseline).toBeLessThanOrEqual(threads);
        await sleep(50);
      }
      expect(seen.size).toBe(threads);
      release.resolve();
      await Promise.all(runs);

      // Idle for idleTimeoutMs: the thread above the warm set ends, the warm set stays.
      expect(await threadsSettleAt(baseline + cores)).toBe(baseline + cores);
      const agent = await brood.createAgent({ model: route });
      expect((await agent.run('hello again')).stopReason).toBe('completed');
    },
  );
});
