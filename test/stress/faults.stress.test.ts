/**
 * Stress variant of the fault scenarios: 64 siblings in one assistant message with every thread-killing
 * fault at once (throw, exit, oom) on 2 threads, repeated; everyone else finishes, nothing runs twice.
 */
import { afterEach, expect, it } from 'vitest';
import type { Brood } from '../../src/index.js';
import { createBrood, defineTool, scriptedModels, subagentTool } from '../../src/index.js';
import { ofType } from '../support/events.js';
import { ExecutionCounter } from '../support/execution-counter.js';
import { recordLifecycle } from '../support/lifecycle.js';
import { route } from '../support/route.js';

const SIBLINGS = 64;
const FAULTS = { 7: 'throw', 23: 'exit', 41: 'oom' } as const;
let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

it.each([1, 2, 3, 4, 5])('round %i: 64 siblings, three thread-killing faults at once', async () => {
  const counter = new ExecutionCounter();
  const calls = Array.from({ length: SIBLINGS }, (_u, i) => ({
    name: 'subagent',
    arguments: {
      description: `s${i}`,
      prompt: i in FAULTS ? `fault ${FAULTS[i as keyof typeof FAULTS]}` : `worker ${i}`,
    },
  }));
  brood = createBrood({
    maxParallelToolCalls: SIBLINGS,
    pool: { threads: 2, hangTimeoutMs: 8_000, resourceLimits: { maxOldGenerationSizeMb: 64 } },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'delegate', turns: [{ toolCalls: calls }, { text: 'parent done' }] },
          ...(['throw', 'exit', 'oom'] as const).map((fault) => ({ match: `fault ${fault}`, turns: [{ fault }] })),
          {
            match: 'worker',
            latencyMs: 10,
            turns: [{ toolCalls: [{ name: 'slow', arguments: {} }] }, { text: 'done {{prompt}}' }],
          },
        ],
      }),
    ],
  });
  brood.use(subagentTool({ provider: 'spawn' }));
  brood.tools.register(
    defineTool({
      name: 'slow',
      description: 'slow',
      parameters: { type: 'object', properties: {} },
      concurrencySafe: true,
      async execute(_args, ctx) {
        counter.hit(ctx.agent?.id, ctx.callId);
        await new Promise((resolve) => setTimeout(resolve, 10));
        return 'ok';
      },
    }),
  );
  const lifecycle = recordLifecycle(brood);
  const parent = await brood.createAgent({ model: route });
  expect(await parent.run('delegate')).toMatchObject({ stopReason: 'completed', output: 'parent done' });
  const results = ofType((await brood.sessions.read(parent.id)).events, 'tool/result');
  expect(results.map((e) => e.data.callId)).toEqual(calls.map((_c, i) => `call_0_${i}`));
  for (const [i, event] of results.entries()) {
    if (i in FAULTS) expect(event.data).toMatchObject({ isError: true });
    else expect(event.data).toMatchObject({ isError: false, content: `done worker ${i}` });
  }
  expect(lifecycle.starts).toHaveLength(SIBLINGS);
  expect(counter.max()).toBe(1);
});
