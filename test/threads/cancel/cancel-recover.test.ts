/**
 * SPEC §10.4–§10.5: a driver that ignores cancellation is stopped by force after cancelGraceMs (its
 * turn ends `aborted`), and a driver that merely shared a dying thread is recovered — an in-flight
 * model request is re-issued on a healthy thread, a running tool call is re-attached, not re-run.
 */
import { threadId as mainThreadId } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/index.js';
import { createBrood, defineTool, inlineProvider, scriptedModels } from '../../../src/index.js';
import { ofType } from '../../support/events.js';
import { ExecutionCounter } from '../../support/execution-counter.js';
import { FakeClock } from '../../support/fake-clock.js';
import { route } from '../../support/route.js';
import { tapStore } from '../../support/tap-store.js';
import { until } from '../../support/until.js';
import { expectWellFormed } from '../../support/well-formed.js';

let brood: Brood | undefined;

afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

type Scripts = NonNullable<Parameters<typeof scriptedModels>[0]['scripts']>;

const GRACE_MS = 300;

function setup(scripts: Scripts, pool: BroodOptions['pool'] = {}, clock?: FakeClock) {
  const tap = tapStore();
  brood = createBrood({
    sessions: tap.store,
    models: [scriptedModels({ id: 'scripted', scripts })],
    pool: { threads: 2, hangTimeoutMs: 1500, cancelGraceMs: GRACE_MS, ...pool },
    codeBusyTimeoutMs: 300,
    ...(clock === undefined ? {} : { _internal: { setTimer: clock.setTimeout } }),
  });
  return { brood, tap };
}

/** With the cancel grace on a fake clock, the hang watchdog (real time) cannot be first to stop a spin. */
const WATCHDOG_LATER = { hangTimeoutMs: 10_000 };

/** The cancel grace runs on `clock`: once the cancel has armed it, the grace passes at once. */
async function graceRunsOut(clock: FakeClock): Promise<void> {
  await until(() => clock.timers > 0);
  clock.advance(GRACE_MS);
}

it('a hang that ignores agent.cancel() is stopped by force after cancelGraceMs: the turn ends aborted', async () => {
  using clock = new FakeClock();
  const { brood, tap } = setup(
    [{ match: 'spin', turns: [{ fault: 'hang' }, { text: 'back {{prompt}}' }] }],
    WATCHDOG_LATER,
    clock,
  );
  const agent = await brood.createAgent({ model: route });
  const bystander = await brood.createAgent({ model: route });
  const result = agent.run('spin forever');
  await tap.waitFor(agent.id, 'model/request');
  agent.cancel();
  await graceRunsOut(clock);
  const ended = await result;
  // 'aborted' (cancellation was asked for), not the hang watchdog's 'error'.
  expect(ended.stopReason).toBe('aborted');
  expect(ended.diagnostic).toMatch(/force/);
  const events = await expectWellFormed(brood.sessions, agent.id);
  expect(ofType(events, 'turn/end').map((e) => e.data)).toEqual([
    { turn: 1, reason: 'aborted', diagnostic: ended.diagnostic },
  ]);
  // The host and the pool are fine; the stopped agent serves its next turn.
  expect(await bystander.run('hello')).toMatchObject({ stopReason: 'completed', output: 'hello' });
  expect(await agent.run('again')).toMatchObject({ stopReason: 'completed', output: 'back spin forever' });
  await expectWellFormed(brood.sessions, agent.id);
});

it('a run() whose signal aborts during a hang also ends aborted by force', async () => {
  using clock = new FakeClock();
  const { brood, tap } = setup([{ match: 'spin', turns: [{ fault: 'hang' }] }], WATCHDOG_LATER, clock);
  const agent = await brood.createAgent({ model: route });
  const controller = new AbortController();
  const result = agent.run('spin please', { signal: controller.signal });
  await tap.waitFor(agent.id, 'model/request');
  controller.abort();
  await graceRunsOut(clock);
  const ended = await result;
  expect(ended.stopReason).toBe('aborted');
  expect(ended.diagnostic).toMatch(/force/);
});

it('co-hosted recovery re-issues an in-flight model request on a healthy thread', async () => {
  // One thread: the victim is certainly co-hosted with the faulting driver.
  const { brood, tap } = setup(
    [
      { match: 'faulty', turns: [{ fault: 'exit' }] },
      { match: 'patient', latencyMs: 700, turns: [{ text: 'finished {{prompt}}' }] },
    ],
    { threads: 1 },
  );
  const victim = await brood.createAgent({ model: route });
  const culprit = await brood.createAgent({ model: route });
  const pending = victim.run('patient one');
  const firstRequest = await tap.waitFor(victim.id, 'model/request');
  const faulted = await culprit.run('faulty one');
  expect(faulted.stopReason).toBe('error');
  const result = await pending;
  expect(result).toMatchObject({ stopReason: 'completed', output: 'finished patient one' });
  expect(result.diagnostic).toBeUndefined();
  const events = await expectWellFormed(brood.sessions, victim.id);
  const requests = ofType(events, 'model/request');
  expect(requests).toHaveLength(2);
  expect(requests[1]!.data.threadId).not.toBe(firstRequest.data.threadId);
  expect(ofType(events, 'assistant/message').map((e) => e.data.finish)).toEqual(['stop']);
  expect(ofType(events, 'turn/start')).toHaveLength(1);
});

it('co-hosted recovery re-attaches a running tool call by call id: it runs and is committed exactly once', async () => {
  const { brood } = setup(
    [
      { match: 'faulty', turns: [{ fault: 'throw' }] },
      { match: 'tooling', turns: [{ toolCalls: [{ name: 'gate', arguments: {} }] }, { text: 'got {{results}}' }] },
    ],
    { threads: 1 },
  );
  const counter = new ExecutionCounter();
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let entered!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  brood.tools.register(
    defineTool({
      name: 'gate',
      description: 'waits for the test',
      parameters: { type: 'object', properties: {} },
      async execute(_args, ctx) {
        counter.hit(ctx.agent?.id, ctx.callId);
        entered();
        await gate;
        return 'opened';
      },
    }),
  );
  const victim = await brood.createAgent({ model: route });
  const culprit = await brood.createAgent({ model: route });
  const pending = victim.run('tooling please');
  await started;
  expect((await culprit.run('faulty one')).stopReason).toBe('error');
  open();
  expect(await pending).toMatchObject({ stopReason: 'completed', output: 'got opened' });
  expect(counter.of(victim.id)).toEqual({ call_0_0: 1 });
  const events = await expectWellFormed(brood.sessions, victim.id);
  expect(ofType(events, 'tool/call')).toHaveLength(1);
  expect(ofType(events, 'tool/result').map((e) => e.data.content)).toEqual(['opened']);
});

it("createBrood refuses fault turns under runner 'inline' (INVALID_CONFIG)", () => {
  let thrown: unknown;
  try {
    createBrood({
      runner: 'inline',
      models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'x', turns: [{ fault: 'exit' }] }] })],
    });
  } catch (error) {
    thrown = error;
  }
  expect((thrown as { code?: unknown } | undefined)?.code).toBe('INVALID_CONFIG');
  // The same scripts are fine for the worker runner.
  const ok = createBrood({
    runner: 'worker',
    models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'x', turns: [{ fault: 'exit' }] }] })],
  });
  return ok.close();
});

it('an inlineProvider child that reaches a fault turn ends error without running it', async () => {
  const { brood, tap } = setup([{ match: 'crashy', turns: [{ fault: 'throw' }] }]);
  brood.subagents.register(inlineProvider());
  const parent = await brood.createAgent({ model: route });
  const run = await brood.subagents.start('inline', {
    parent,
    prompt: 'crashy child',
    signal: new AbortController().signal,
  });
  const result = await run.result;
  expect(result.stopReason).toBe('error');
  expect(typeof result.diagnostic).toBe('string');
  await run.dispose();
  const events = await expectWellFormed(brood.sessions, run.id);
  // It really ran on the main thread, where a fault would have taken the host down.
  const request = await tap.waitFor(run.id, 'model/request');
  expect(request.data.threadId).toBe(mainThreadId);
  expect(ofType(events, 'assistant/message').map((e) => e.data.finish)).toEqual(['error']);
  expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual(['error']);
  // The host is alive and serving.
  expect(await parent.run('still here')).toMatchObject({ stopReason: 'completed', output: 'still here' });
});
