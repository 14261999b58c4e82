/**
 * The parent runs an assistant message's tool calls (DriverGateway.runTools, src/agents/parent-tools.ts)
 * with the SPEC §7.2 pool: what that must keep from the driver's own scheduling. Classes are read
 * from the live registry right before each start; a model that reuses one call id in every step gets
 * each step's tool run; a message with a run_code call stays in the driver (its sandbox is there);
 * a batch whose driver's thread dies keeps running in the parent and the recovered driver gets its
 * results, every call run and logged once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood } from '../../../src/index.js';
import { createBrood, defineTool, moduleAdapter, scriptedModels } from '../../../src/index.js';
import { ConcurrencyProbe } from '../../support/concurrency-probe.js';
import { deferred, pause } from '../../support/deferred.js';
import { eventsOf, ofType } from '../../support/events.js';
import { ExecutionCounter } from '../../support/execution-counter.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';
import { expectWellFormed } from '../../support/well-formed.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const reusedIds = moduleAdapter({
  id: 'reused',
  models: ['m'],
  options: { steps: 3 },
  moduleUrl: new URL('./fixtures/reused-ids-adapter.mjs', import.meta.url),
});

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('a model that reuses its call ids in every step gets each step its own tool runs', async () => {
    brood = makeBrood(runner, { models: [reusedIds] });
    let runs = 0;
    brood.tools.register(
      defineTool({
        name: 'count',
        description: 'counts its runs',
        parameters: { type: 'object', properties: {} },
        concurrencySafe: true,
        execute: () => String(++runs),
      }),
    );
    const agent = await brood.createAgent({ model: { provider: 'reused', model: 'm' } });
    const result = await agent.run('count in three steps');
    expect(result).toMatchObject({ stopReason: 'completed', output: '1,2,3,4,5,6' });
    expect(runs).toBe(6);
    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'tool/call')).toHaveLength(6);
    expect(ofType(events, 'tool/result').map((e) => e.data.content)).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('reads a call’s class from the live registry right before it starts', async () => {
    const calls = [
      { name: 'barrier', arguments: {} },
      { name: 'flip', arguments: { i: 1 } },
      { name: 'flip', arguments: { i: 2 } },
    ];
    brood = makeBrood(runner, {
      maxParallelToolCalls: 4,
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'go', turns: [{ toolCalls: calls }, { text: 'ok' }] }] }),
      ],
    });
    const probe = new ConcurrencyProbe();
    const flip = (concurrencySafe: boolean) =>
      defineTool({
        name: 'flip',
        description: 'overlaps its siblings only while parallel',
        parameters: z.object({ i: z.number() }),
        concurrencySafe,
        execute: async ({ i }) => {
          await probe.enter(`f${i}`, 2, 60);
          probe.leave(`f${i}`);
          return i;
        },
      });
    const registry = brood.tools;
    let parallelFlip = registry.register(flip(true));
    registry.register(
      defineTool({
        name: 'barrier',
        description: 'exclusive; makes flip exclusive while it runs',
        parameters: { type: 'object', properties: {} },
        execute: () => {
          parallelFlip();
          parallelFlip = registry.register(flip(false));
          return 'flipped';
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    expect((await agent.run('go')).stopReason).toBe('completed');
    // Planned as parallel when the message arrived, exclusive by the time each flip call started.
    expect(probe.max).toBe(1);
    expect(probe.timeline).toEqual(['start:f1', 'end:f1', 'start:f2', 'end:f2']);
  });
});

it('a message with a run_code call is scheduled by the driver, beside native calls (codeMode both)', async () => {
  const calls = [
    { name: 'run_code', arguments: { description: 'adds', code: 'return (await tools.echo({ v: 1 })) + 1;' } },
    { name: 'echo', arguments: { v: 5 } },
  ];
  brood = createBrood({
    codeMode: 'both',
    pool: { threads: 1 },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [{ match: 'mixed', turns: [{ toolCalls: calls }, { text: '{{results}}' }] }],
      }),
    ],
  });
  brood.tools.register(
    defineTool({
      name: 'echo',
      description: 'returns v',
      parameters: z.object({ v: z.number() }),
      execute: ({ v }) => v,
    }),
  );
  const agent = await brood.createAgent({ model: route });
  expect((await agent.run('mixed please')).stopReason).toBe('completed');
  const events = await eventsOf(brood, agent.id);
  expect(ofType(events, 'tool/result').map((e) => [e.data.name, e.data.isError, e.data.content])).toEqual([
    ['run_code', false, '2'],
    ['echo', false, '5'],
  ]);
});

it('a batch outlives its driver’s thread: the recovered driver gets its results, each call run and logged once', async () => {
  const calls = [0, 1, 2, 3].map((i) => ({ name: 'slow', arguments: { i } }));
  const tap = { entered: 0 };
  const twoRunning = deferred();
  const release = deferred();
  brood = createBrood({
    maxParallelToolCalls: 2,
    pool: { threads: 1 },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'faulty', turns: [{ fault: 'throw' }] },
          { match: 'batch', turns: [{ toolCalls: calls }, { text: 'got {{results}}' }] },
        ],
      }),
    ],
  });
  const counter = new ExecutionCounter();
  brood.tools.register(
    defineTool({
      name: 'slow',
      description: 'waits for the test on its first two calls',
      parameters: z.object({ i: z.number() }),
      concurrencySafe: true,
      async execute({ i }, ctx) {
        counter.hit(ctx.agent?.id, ctx.callId);
        if (++tap.entered === 2) twoRunning.resolve();
        if (i < 2) await release.promise;
        return `r${i}`;
      },
    }),
  );
  const victim = await brood.createAgent({ model: route });
  const culprit = await brood.createAgent({ model: route });
  const pending = victim.run('batch please');
  await twoRunning.promise;
  // The culprit kills the one pool thread while the victim's driver waits for its batch.
  expect((await culprit.run('faulty one')).stopReason).toBe('error');
  await pause(20);
  release.resolve();
  const result = await pending;
  expect(result).toMatchObject({ stopReason: 'completed' });
  expect(result.output).toBe('got r0\nr1\nr2\nr3');
  expect(counter.of(victim.id)).toEqual({ call_0_0: 1, call_0_1: 1, call_0_2: 1, call_0_3: 1 });
  const events = await expectWellFormed(brood.sessions, victim.id);
  expect(ofType(events, 'tool/call')).toHaveLength(4);
  expect(ofType(events, 'tool/result').map((e) => e.data.content)).toEqual(['r0', 'r1', 'r2', 'r3']);
});
