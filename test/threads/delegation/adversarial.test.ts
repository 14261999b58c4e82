/**
 * An adversarial (scripted) child tries everything it should not be able to do through the resolver:
 * a denied tool, a hallucinated tool, a tool removed mid-run, a forged `run_code` outside Code Mode,
 * delegation past its depth cap, a model/effort outside the catalog, a lone selection field, oversized
 * and non-JSON arguments. Each attempt gets an errored tool/result with the right errorCode, no tool
 * body runs that should not, no grandchild is ever started, and the child and its parent still finish.
 */
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood, Disposer } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels, subagentTool } from '../../../src/index.js';
import { ofType } from '../../support/events.js';
import { ExecutionCounter } from '../../support/execution-counter.js';
import { recordLifecycle } from '../../support/lifecycle.js';
import { route } from '../../support/route.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const MB = 1024 * 1024;
const big = 'x'.repeat(MB);

/** The child's attempts in step 1 (after the removal in step 0), with the code each must get. */
const STEP1: { call: { name: string; arguments: unknown }; code: string }[] = [
  { call: { name: 'ephemeral', arguments: {} }, code: 'UNKNOWN_TOOL' },
  {
    call: { name: 'subagent_shallow', arguments: { description: 'too deep', prompt: 'grandchild' } },
    code: 'DEPTH_EXCEEDED',
  },
  {
    call: {
      name: 'subagent',
      arguments: { description: 'bad model', prompt: 'grandchild', provider: 'scripted', model: 'gpt-imaginary' },
    },
    code: 'UNKNOWN_MODEL',
  },
  {
    call: {
      name: 'subagent',
      arguments: { description: 'bad provider', prompt: 'grandchild', provider: 'nobody', model: 'scripted' },
    },
    code: 'UNKNOWN_MODEL',
  },
  {
    call: {
      name: 'subagent',
      arguments: { description: 'bad effort', prompt: 'grandchild', reasoning_effort: 'ludicrous' },
    },
    code: 'INVALID_EFFORT',
  },
  {
    call: { name: 'subagent', arguments: { description: 'half a pair', prompt: 'grandchild', provider: 'scripted' } },
    code: 'INVALID_ARGS',
  },
  { call: { name: 'subagent', arguments: `{"description": "torn", "prompt": "grandchild"` }, code: 'INVALID_ARGS' },
  { call: { name: 'subagent', arguments: `{"description": "huge", "prompt": "${big}` }, code: 'INVALID_ARGS' },
  { call: { name: 'echo', arguments: { text: big } }, code: 'INVALID_ARGS' },
  { call: { name: 'echo', arguments: `{"text": ${big}}` }, code: 'INVALID_ARGS' },
  { call: { name: 'echo', arguments: 'not json at all' }, code: 'INVALID_ARGS' },
  { call: { name: 'echo', arguments: '[1, 2, 3]' }, code: 'INVALID_ARGS' },
];

it('every forbidden attempt is an errored tool result with its code, and nothing runs that should not', async () => {
  const counter = new ExecutionCounter();
  brood = createBrood({
    pool: { threads: 2 },
    models: [
      scriptedModels({
        id: 'scripted',
        models: [{ id: 'scripted', efforts: ['low', 'high'], defaultEffort: 'low' }],
        scripts: [
          {
            match: 'delegate',
            turns: [
              { toolCalls: [{ name: 'subagent', arguments: { description: 'adversary', prompt: 'adversary' } }] },
              { text: 'parent saw: {{results}}' },
            ],
          },
          {
            match: 'adversary',
            turns: [
              {
                toolCalls: [
                  { name: 'secret', arguments: {} },
                  { name: 'hallucinated_tool', arguments: {} },
                  { name: 'run_code', arguments: { description: 'forged', code: 'return 1' } },
                  { name: 'remove_ephemeral', arguments: {} },
                ],
              },
              { toolCalls: STEP1.map((s) => s.call) },
              { text: 'adversary done' },
            ],
          },
        ],
      }),
    ],
  });
  const lifecycle = recordLifecycle(brood);
  brood.use(
    subagentTool({ provider: 'spawn', enableModelSelection: true, maxDepth: 2, toolFilter: { deny: ['secret'] } }),
  );
  brood.use(
    subagentTool({ provider: 'spawn', toolName: 'subagent_shallow', maxDepth: 1, enableRunInBackground: false }),
  );
  const counted = (name: string, parameters: z.ZodType<unknown> = z.object({}).strict()) =>
    defineTool({
      name,
      description: name,
      parameters,
      execute(_args: unknown, ctx) {
        counter.hit(`${ctx.agent?.id}/${name}`, ctx.callId);
        return `${name} ran`;
      },
    });
  brood.tools.register(counted('secret'));
  brood.tools.register(counted('echo', z.object({ text: z.string().max(1000) }).strict()));
  const removeEphemeral: Disposer = brood.tools.register(counted('ephemeral'));
  brood.tools.register(
    defineTool({
      name: 'remove_ephemeral',
      description: 'unregisters ephemeral',
      parameters: z.object({}),
      execute(_args, ctx) {
        counter.hit(`${ctx.agent?.id}/remove_ephemeral`, ctx.callId);
        removeEphemeral();
        return 'removed';
      },
    }),
  );

  const parent = await brood.createAgent({ model: route });
  const result = await parent.run('delegate');
  expect(result.stopReason).toBe('completed');
  expect(result.output).toBe('parent saw: adversary done');

  // Exactly one child; no grandchild was ever started by any of the forbidden delegations.
  expect(lifecycle.starts).toHaveLength(1);
  const child = lifecycle.starts[0]!;
  expect(child).toMatchObject({ parentId: parent.id, depth: 1 });
  const events = (await brood.sessions.read(child.id)).events;
  expect((await brood.sessions.list()).map((h) => h.id).sort()).toEqual([parent.id, child.id].sort());

  const results = ofType(events, 'tool/result').map((e) => e.data);
  expect(results.map((r) => r.name)).toEqual([
    'secret',
    'hallucinated_tool',
    'run_code',
    'remove_ephemeral',
    ...STEP1.map((s) => s.call.name),
  ]);
  expect(results.slice(0, 3).map((r) => [r.isError, r.errorCode])).toEqual([
    [true, 'UNKNOWN_TOOL'],
    [true, 'UNKNOWN_TOOL'],
    [true, 'UNKNOWN_TOOL'],
  ]);
  expect(results[3]).toMatchObject({ isError: false, content: 'removed' });
  expect(results.slice(4).map((r) => [r.name, r.isError, r.errorCode])).toEqual(
    STEP1.map((s) => [s.call.name, true, s.code]),
  );
  for (const r of results.filter((r) => r.isError)) expect(String(r.content)).toMatch(/^Error: /);

  // The filter and the removal are visible in what the model was shown, request by request.
  const presented = ofType(events, 'model/request').map((e) => e.data.tools as string[]);
  expect(presented).toHaveLength(3);
  for (const tools of presented) {
    expect(tools).not.toContain('secret');
    expect(tools).not.toContain('run_code');
  }
  expect(presented[0]).toContain('ephemeral');
  expect(presented[1]).not.toContain('ephemeral');

  // Only the legitimate body ran, once; the forbidden ones never ran.
  expect(Object.fromEntries(counter.counts)).toEqual({ [`${child.id}/remove_ephemeral call_0_3`]: 1 });
});
