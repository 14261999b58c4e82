/**
 * SPEC §7.2 through the runtime: a rolling pool capped by maxParallelToolCalls, exclusive calls as
 * barriers, function classifiers, and results committed in model order whatever order they finish in.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood, SessionEvent } from '../../../src/index.js';
import { defineTool, scriptedModels } from '../../../src/index.js';
import { ConcurrencyProbe } from '../../support/concurrency-probe.js';
import { pause } from '../../support/deferred.js';
import { eventsOf, ofType, turnEvents } from '../../support/events.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const args = (i: number, extra: Record<string, unknown> = {}) => ({ i, ...extra });
const resultIds = (events: SessionEvent[]) => ofType(events, 'tool/result').map((e) => e.data.callId);

/**
 * Releases the highest-numbered running call whenever the pool is as full as it can be, so calls
 * finish in (rolling) reverse order: with a cap of 3 and 8 calls, 2,3,4,5,6,7,1,0.
 */
class ReverseReleaser {
  private readonly waiting = new Map<number, () => void>();
  private finished = 0;
  readonly finishOrder: number[] = [];

  constructor(
    private readonly total: number,
    private readonly cap: number,
  ) {}

  hold(i: number): Promise<void> {
    const released = new Promise<void>((resolve) => this.waiting.set(i, resolve));
    this.tryRelease();
    // A pool that under-fills would never reach `cap`: release anyway so the test fails, not hangs.
    const fallback = setTimeout(() => this.release(i), 250);
    return released.finally(() => clearTimeout(fallback));
  }

  private tryRelease(): void {
    const expected = Math.min(this.cap, this.total - this.finished);
    if (expected > 0 && this.waiting.size === expected) this.release(Math.max(...this.waiting.keys()));
  }

  private release(i: number): void {
    const resolve = this.waiting.get(i);
    if (!resolve) return;
    this.waiting.delete(i);
    this.finished += 1;
    this.finishOrder.push(i);
    resolve();
    this.tryRelease(); // the tail (fewer calls left than the cap) drains without new arrivals
  }
}

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('caps a rolling pool at maxParallelToolCalls and commits results in model order', async () => {
    const calls = Array.from({ length: 8 }, (_, i) => ({ name: 'slow', arguments: args(i) }));
    brood = makeBrood(runner, {
      maxParallelToolCalls: 3,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'fan', turns: [{ toolCalls: calls }, { text: '{{results}}' }] }],
        }),
      ],
    });
    const probe = new ConcurrencyProbe();
    const releaser = new ReverseReleaser(8, 3);
    brood.tools.register(
      defineTool({
        name: 'slow',
        description: 'finishes when the test says so',
        parameters: z.object({ i: z.number() }),
        concurrencySafe: true,
        execute: async ({ i }) => {
          await probe.enter(String(i));
          await releaser.hold(i);
          probe.leave(String(i));
          return `done ${i}`;
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('fan out');

    expect(result.stopReason).toBe('completed');
    expect(probe.max).toBe(3);
    // The bodies really finished out of order ...
    expect(releaser.finishOrder).toEqual([2, 3, 4, 5, 6, 7, 1, 0]);
    // ... yet the session and the model history (what {{results}} reads) are in model order.
    const events = turnEvents(await eventsOf(brood, agent.id), 1);
    const expectedIds = calls.map((_, i) => `call_0_${i}`);
    expect(ofType(events, 'tool/call').map((e) => e.data.callId)).toEqual(expectedIds);
    expect(resultIds(events)).toEqual(expectedIds);
    expect(ofType(events, 'tool/result').map((e) => e.data.content)).toEqual(calls.map((_, i) => `done ${i}`));
    expect(result.output).toBe(calls.map((_, i) => `done ${i}`).join('\n'));
  });

  it('runs an exclusive call alone, as a barrier between parallel groups', async () => {
    const turn = [
      { name: 'par', arguments: args(0) },
      { name: 'par', arguments: args(1) },
      { name: 'par', arguments: args(2) },
      { name: 'excl', arguments: args(3) },
      { name: 'par', arguments: args(4) },
      { name: 'par', arguments: args(5) },
    ];
    brood = makeBrood(runner, {
      maxParallelToolCalls: 3,
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'mix', turns: [{ toolCalls: turn }, { text: 'ok' }] }] }),
      ],
    });
    const probe = new ConcurrencyProbe();
    let runningWhenExclusiveStarted = -1;
    let runningWhenExclusiveEnded = -1;
    brood.tools.register(
      defineTool({
        name: 'par',
        description: 'parallel-safe',
        parameters: z.object({ i: z.number() }),
        concurrencySafe: true,
        execute: async ({ i }) => {
          // Calls 0-2 and 4-5 each rendezvous with their group, so both groups really overlap.
          await probe.enter(`p${i}`, i < 3 ? 3 : 2);
          probe.leave(`p${i}`);
          return i;
        },
      }),
    );
    brood.tools.register(
      defineTool({
        name: 'excl',
        description: 'exclusive (no concurrencySafe)',
        parameters: z.object({ i: z.number() }),
        execute: async () => {
          await probe.enter('x');
          runningWhenExclusiveStarted = probe.running;
          await pause(5); // room for a wrongly scheduled call to start
          runningWhenExclusiveEnded = probe.running;
          probe.leave('x');
          return 'x';
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('mix them');

    expect(result.stopReason).toBe('completed');
    expect(probe.max).toBe(3);
    expect(runningWhenExclusiveStarted).toBe(1);
    expect(runningWhenExclusiveEnded).toBe(1);
    const t = probe.timeline;
    const xStart = t.indexOf('start:x');
    const xEnd = t.indexOf('end:x');
    for (const i of [0, 1, 2]) expect(t.indexOf(`end:p${i}`)).toBeLessThan(xStart);
    for (const i of [4, 5]) expect(t.indexOf(`start:p${i}`)).toBeGreaterThan(xEnd);
    expect(resultIds(await eventsOf(brood, agent.id))).toEqual(turn.map((_, i) => `call_0_${i}`));
  });

  it('honours a concurrencySafe function classifier per call', async () => {
    const turn = [
      { name: 'maybe', arguments: args(0, { safe: true }) },
      { name: 'maybe', arguments: args(1, { safe: true }) },
      { name: 'maybe', arguments: args(2, { safe: false }) },
      { name: 'maybe', arguments: args(3, { safe: true }) },
      { name: 'maybe', arguments: args(4, { safe: true }) },
    ];
    brood = makeBrood(runner, {
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'classify', turns: [{ toolCalls: turn }, { text: 'ok' }] }],
        }),
      ],
    });
    const probe = new ConcurrencyProbe();
    const classified: number[] = [];
    let runningDuringUnsafe = -1;
    brood.tools.register(
      defineTool({
        name: 'maybe',
        description: 'safe only when asked to be',
        parameters: z.object({ i: z.number(), safe: z.boolean() }),
        concurrencySafe: ({ i, safe }) => {
          classified.push(i);
          return safe;
        },
        execute: async ({ i, safe }) => {
          await probe.enter(`m${i}`, safe ? 2 : 1);
          if (!safe) {
            await pause(5);
            runningDuringUnsafe = probe.running;
          }
          probe.leave(`m${i}`);
          return i;
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('classify these');

    expect(result.stopReason).toBe('completed');
    expect([...new Set(classified)].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(probe.max).toBe(2); // the safe pairs overlapped
    expect(runningDuringUnsafe).toBe(1); // the unsafe call ran alone
    const t = probe.timeline;
    expect(t.indexOf('end:m0')).toBeLessThan(t.indexOf('start:m2'));
    expect(t.indexOf('end:m1')).toBeLessThan(t.indexOf('start:m2'));
    expect(t.indexOf('end:m2')).toBeLessThan(t.indexOf('start:m3'));
    expect(resultIds(await eventsOf(brood, agent.id))).toEqual(turn.map((_, i) => `call_0_${i}`));
  });
});
