/**
 * SPEC §3 (run signal, cancel) and §7.3 (abort mid-pool): started calls commit, unstarted calls get
 * ABORTED_BEFORE_DISPATCH, the turn ends `aborted`, run() never rejects, queued messages survive.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood } from '../../../src/index.js';
import { defineTool, scriptedModels } from '../../../src/index.js';
import { deferred } from '../../support/deferred.js';
import { eventsOf, ofType, turnEvents } from '../../support/events.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';
import { tapStore } from '../../support/tap-store.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('an aborted run signal mid-pool commits started calls, marks unstarted ones, ends the turn aborted', async () => {
    const calls = Array.from({ length: 5 }, (_, i) => ({ name: 'gate', arguments: { i } }));
    brood = makeBrood(runner, {
      maxParallelToolCalls: 2,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'work', turns: [{ toolCalls: calls }, { text: 'never reached' }] }],
        }),
      ],
    });
    const started: number[] = [];
    const bothStarted = deferred();
    const release = deferred();
    let sawAbort = 0;
    brood.tools.register(
      defineTool({
        name: 'gate',
        description: 'waits for the test',
        parameters: z.object({ i: z.number() }),
        concurrencySafe: true,
        execute: async ({ i }, ctx) => {
          started.push(i);
          if (started.length === 2) bothStarted.resolve();
          await release.promise;
          if (ctx.signal.aborted) sawAbort += 1;
          return `ran ${i}`;
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const controller = new AbortController();
    const running = agent.run('work please', { signal: controller.signal });
    await bothStarted.promise;
    controller.abort();
    release.resolve();
    const result = await running;

    expect(result.stopReason).toBe('aborted');
    expect(started).toEqual([0, 1]);
    expect(sawAbort).toBe(2); // the tools' signal is the turn's: cancellation reached the bodies
    const events = turnEvents(await eventsOf(brood, agent.id), 1);
    expect(ofType(events, 'tool/call').map((e) => e.data.callId)).toEqual(['call_0_0', 'call_0_1']);
    const results = ofType(events, 'tool/result');
    expect(results.map((e) => e.data.callId)).toEqual(calls.map((_, i) => `call_0_${i}`));
    for (const committed of results.slice(0, 2)) expect(committed.data.errorCode).not.toBe('ABORTED_BEFORE_DISPATCH');
    for (const unstarted of results.slice(2)) {
      expect(unstarted.data).toMatchObject({ isError: true, errorCode: 'ABORTED_BEFORE_DISPATCH' });
    }
    expect(ofType(events, 'model/request')).toHaveLength(1); // no request after the abort
    expect(events.at(-1)?.data).toMatchObject({ turn: 1, reason: 'aborted' });
    expect(agent.status).not.toBe('disposed');
  });

  it("a tool's ctx.signal is an AbortSignal the cancel fires; a tool that never reads it still ends ABORTED", async () => {
    brood = makeBrood(runner, {
      maxParallelToolCalls: 2,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'work',
              turns: [
                {
                  toolCalls: [
                    { name: 'listen', arguments: {} },
                    { name: 'ignore', arguments: {} },
                  ],
                },
                { text: 'never reached' },
              ],
            },
          ],
        }),
      ],
    });
    const listening = deferred();
    const ignoring = deferred();
    const release = deferred();
    const seen: { real: boolean; sameInCopy: boolean; reason?: unknown } = { real: false, sameInCopy: false };
    brood.tools.register(
      defineTool({
        name: 'listen',
        description: 'waits for its signal',
        parameters: z.object({}),
        concurrencySafe: true,
        execute: (_args, ctx) => {
          const { signal } = ctx;
          seen.real = signal instanceof AbortSignal;
          seen.sameInCopy = { ...ctx }.signal === signal;
          listening.resolve();
          return new Promise<string>((resolve) =>
            signal.addEventListener('abort', () => {
              seen.reason = signal.reason;
              resolve('heard');
            }),
          );
        },
      }),
    );
    brood.tools.register(
      defineTool({
        name: 'ignore',
        description: 'never reads its signal',
        parameters: z.object({}),
        concurrencySafe: true,
        execute: async () => {
          ignoring.resolve();
          await release.promise;
          return 'done anyway';
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const controller = new AbortController();
    const running = agent.run('work please', { signal: controller.signal });
    await Promise.all([listening.promise, ignoring.promise]);
    controller.abort();
    release.resolve();
    const result = await running;

    expect(result.stopReason).toBe('aborted');
    expect(seen).toMatchObject({ real: true, sameInCopy: true });
    expect(seen.reason).toBeInstanceOf(Error);
    const results = ofType(turnEvents(await eventsOf(brood, agent.id), 1), 'tool/result');
    expect(results.map((e) => e.data.errorCode)).toEqual(['ABORTED', 'ABORTED']);
  });

  it('run() resolves aborted (never rejects) when its signal was aborted before the call', async () => {
    brood = makeBrood(runner);
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('too late', { signal: AbortSignal.abort() });
    expect(result.stopReason).toBe('aborted');
    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'model/request')).toHaveLength(0);
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual(['aborted']);
  });

  it('cancel() during a slow model request ends that turn aborted and keeps the queued message', async () => {
    const tap = tapStore();
    brood = makeBrood(runner, {
      sessions: tap.store,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'slow', latencyMs: 300, turns: [{ text: 'first answer' }, { text: 'second answer' }] }],
        }),
      ],
    });
    const agent = await brood.createAgent({ model: route });
    const first = agent.run('slow one');
    const second = agent.run('then this');
    await tap.waitFor(agent.id, 'model/request');
    const cancelledAt = Date.now();
    agent.cancel();
    const firstResult = await first;
    expect(Date.now() - cancelledAt).toBeLessThan(200); // the scripted wait was interrupted, not sat out
    expect(firstResult.stopReason).toBe('aborted');
    const secondResult = await second;
    expect(secondResult).toMatchObject({ stopReason: 'completed', output: 'first answer' });

    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual(['aborted', 'completed']);
    expect(ofType(turnEvents(events, 1), 'assistant/message')).toHaveLength(0);
    expect(ofType(turnEvents(events, 2), 'model/request')).toHaveLength(1);
  });

  it('a queued message whose run signal aborts before its turn ends aborted without a model request', async () => {
    brood = makeBrood(runner, {
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            { match: 'block', turns: [{ toolCalls: [{ name: 'block', arguments: {} }] }, { text: 'unblocked' }] },
          ],
        }),
      ],
    });
    const entered = deferred();
    const release = deferred();
    brood.tools.register(
      defineTool({
        name: 'block',
        description: 'holds the first turn',
        parameters: z.object({}),
        execute: async () => {
          entered.resolve();
          await release.promise;
          return 'released';
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const first = agent.run('block first');
    await entered.promise;
    const controller = new AbortController();
    const queued = agent.run('queued behind', { signal: controller.signal });
    const third = agent.run('after that');
    controller.abort();
    release.resolve();

    expect((await first).stopReason).toBe('completed');
    expect((await queued).stopReason).toBe('aborted');
    expect((await third).stopReason).toBe('completed');
    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual(['completed', 'aborted', 'completed']);
    const queuedTurn = turnEvents(events, 2);
    expect(ofType(queuedTurn, 'model/request')).toHaveLength(0);
    expect(ofType(turnEvents(events, 3), 'model/request')).toHaveLength(1);
    // Claimed in acceptance order, one message per turn.
    const accepted = ofType(events, 'user/message').map((e) => e.data.id);
    expect(ofType(events, 'turn/start').map((e) => e.data.messageIds)).toEqual(accepted.map((id) => [id]));
  });
});
