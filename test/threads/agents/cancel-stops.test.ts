/**
 * SPEC §3, §7.3, §10.4: a cancelled turn sends no further model request and ends
 * `aborted`, always — through `run(text, { signal })` and `agent.cancel()` alike, on both runners.
 *
 * Two ways a cancel used to be lost: a driver recovered onto a new thread (its thread recycled because
 * a co-hosted child ignored its own cancellation) began the resumed turn un-cancelled and asked the
 * model again; and a cancel that reached the driver before it had begun the turn (its adapter still
 * loading) was dropped, so the turn ran on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Brood, TurnResult } from '../../../src/index.js';
import { moduleAdapter, scriptedModels, subagentTool } from '../../../src/index.js';
import { pause } from '../../support/deferred.js';
import { eventsOf, ofType, turnEvents } from '../../support/events.js';
import { FakeClock } from '../../support/fake-clock.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';
import { BEFORE_ANSWER } from './fixtures/answer-hook-adapter.mjs';
import { CHILD_REQUESTS, PARENT_REQUESTS } from './fixtures/deaf-child-adapter.mjs';
import { LOADING, RELEASE, REQUESTS } from './fixtures/gated-load-adapter.mjs';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  delete (globalThis as Record<symbol, unknown>)[BEFORE_ANSWER];
});

type AbortPath = 'run signal' | 'agent.cancel()';
const PATHS: AbortPath[] = ['run signal', 'agent.cancel()'];

/** Starts a turn and returns it with the way this case aborts it. */
function startTurn(agent: Agent, text: string, path: AbortPath): { result: Promise<TurnResult>; abort: () => void } {
  const controller = new AbortController();
  const result = agent.run(text, { signal: controller.signal });
  return { result, abort: path === 'run signal' ? () => controller.abort() : () => agent.cancel() };
}

/** Resolves once cell `index` is no longer `from` (the adapter, on any thread, changed it). */
async function cellLeaves(cells: Int32Array, index: number, from: number): Promise<void> {
  while (Atomics.load(cells, index) === from) await pause(1);
}

const GRACE_MS = 200;
/**
 * The child's request outlasts the latest cancel (300 ms in) well, so a worker child is stopped by
 * force (its thread recycled) before it would answer; the grace itself runs on a fake clock
 * (`gracesRunOut`). An inline child cannot be stopped: its turn ends when this hold does.
 */
const CHILD_HOLD_MS = 1000;

/** Waits for `result`, letting every cancel grace armed on `clock` meanwhile run out at once. */
async function gracesRunOut<T>(clock: FakeClock, result: Promise<T>): Promise<T> {
  let settled = false;
  const settle = () => {
    settled = true;
  };
  result.then(settle, settle);
  while (!settled) {
    if (clock.timers > 0) clock.advance(GRACE_MS);
    await pause(1);
  }
  return result;
}

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  describe.each(PATHS)('aborted through the %s', (path) => {
    it.each([0, 100, 300])(
      'a child that ignores cancellation, aborted %i ms into its request: no further parent request, the turn ends aborted',
      async (delayMs) => {
        using clock = new FakeClock();
        const cells = new Int32Array(new SharedArrayBuffer(8));
        // One thread: the child shares it with the parent, so the child's forced stop recycles the
        // parent's thread too and the parent's driver is recovered onto a new one mid-cancel.
        brood = makeBrood(runner, {
          _internal: { setTimer: clock.setTimeout },
          pool: { threads: 1, cancelGraceMs: GRACE_MS },
          models: [
            moduleAdapter({
              id: 'deaf',
              models: ['m'],
              moduleUrl: new URL('./fixtures/deaf-child-adapter.mjs', import.meta.url),
              options: { cells: cells.buffer, holdMs: CHILD_HOLD_MS },
            }),
          ],
        });
        brood.use(subagentTool({ provider: 'spawn' }));
        const agent = await brood.createAgent({ model: { provider: 'deaf', model: 'm' } });
        const turn = startTurn(agent, 'delegate this', path);
        await cellLeaves(cells, CHILD_REQUESTS, 0);
        await pause(delayMs);
        turn.abort();
        const result = await gracesRunOut(clock, turn.result);

        expect(result.stopReason).toBe('aborted');
        expect(result.output).not.toContain('after the child');
        expect(Atomics.load(cells, PARENT_REQUESTS)).toBe(1);
        const events = turnEvents(await eventsOf(brood, agent.id), 1);
        expect(ofType(events, 'model/request')).toHaveLength(1);
        expect(events.at(-1)?.data).toMatchObject({ turn: 1, reason: 'aborted' });
      },
    );

    it('a cancel that reaches the driver while its adapter is still loading: no model request, aborted', async () => {
      const cells = new Int32Array(new SharedArrayBuffer(12));
      brood = makeBrood(runner, {
        pool: { threads: 1 },
        models: [
          moduleAdapter({
            id: 'gated',
            models: ['m'],
            moduleUrl: new URL('./fixtures/gated-load-adapter.mjs', import.meta.url),
            options: { cells: cells.buffer },
          }),
        ],
      });
      const agent = await brood.createAgent({ model: { provider: 'gated', model: 'm' } });
      const turn = startTurn(agent, 'hello', path);
      await cellLeaves(cells, LOADING, 0); // the turn is claimed and its driver is waiting for the adapter
      turn.abort();
      // The cancel has left the parent (its link sends at the end of the tick) before the adapter loads.
      await new Promise((resolve) => setImmediate(resolve));
      Atomics.store(cells, RELEASE, 1);
      const result = await turn.result;

      expect(result).toMatchObject({ stopReason: 'aborted' });
      expect(result.diagnostic).toBeUndefined(); // not stopped by force: the driver honoured the cancel
      expect(Atomics.load(cells, REQUESTS)).toBe(0);
      const events = turnEvents(await eventsOf(brood, agent.id), 1);
      expect(ofType(events, 'model/request')).toHaveLength(0);
      expect(await agent.run('again')).toMatchObject({ stopReason: 'completed', output: 'answered' });
    });
  });
});

describe.each(PATHS)('a final answer that crosses a cancel (%s)', (path) => {
  it('ends the turn aborted, its answer kept as the output', async () => {
    brood = makeBrood('inline', {
      models: [
        moduleAdapter({
          id: 'hook',
          models: ['m'],
          moduleUrl: new URL('./fixtures/answer-hook-adapter.mjs', import.meta.url),
        }),
      ],
    });
    const agent = await brood.createAgent({ model: { provider: 'hook', model: 'm' } });
    const turn = startTurn(agent, 'hello', path);
    // The adapter shares this thread (inline runner): it aborts the turn as it hands back its answer.
    (globalThis as Record<symbol, unknown>)[BEFORE_ANSWER] = turn.abort;
    const result = await turn.result;

    expect(result).toMatchObject({ stopReason: 'aborted', output: 'the answer' });
    const events = turnEvents(await eventsOf(brood, agent.id), 1);
    expect(ofType(events, 'model/request')).toHaveLength(1);
    expect(events.at(-1)?.data).toMatchObject({ turn: 1, reason: 'aborted' });
  });
});

describe.each(PATHS)("aborted while the runtime's first pool thread is still booting (%s)", (path) => {
  it('ends aborted as a driver would end it: no model request, no closed-out answer, and the next turn runs', async () => {
    // Threads start lazily: this runtime has none until the first run, which waits ~0.5 s for one.
    brood = makeBrood('worker', {
      pool: { threads: 1 },
      models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'boot', turns: [{ text: 'done' }] }] })],
    });
    const agent = await brood.createAgent({ model: route });
    const turn = startTurn(agent, 'boot', path);
    await pause(1);
    turn.abort();
    const result = await turn.result;

    expect(result.stopReason).toBe('aborted');
    expect(result.diagnostic).toBeUndefined();
    const events = turnEvents(await eventsOf(brood, agent.id), 1);
    expect(ofType(events, 'model/request')).toHaveLength(0);
    expect(ofType(events, 'assistant/message')).toHaveLength(0);
    expect(events.at(-1)?.data).toMatchObject({ turn: 1, reason: 'aborted' });
    await expect(agent.run('boot')).resolves.toMatchObject({ stopReason: 'completed', output: 'done' });
  });
});
