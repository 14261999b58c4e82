/**
 * SPEC §9 "Unpublished setup": a failure at any step rolls everything back — no session, no agent,
 * no events, no worker task — and the start rejects with the step's own code.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, SessionStore, SubagentProvider } from '../../../src/index.js';
import { defineTool, memorySessions, scriptedModels } from '../../../src/index.js';
import { route } from '../../support/route.js';
import { allRequests, type Harness, harness } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.brood.close();
  h = undefined;
});

/** A store whose create() can be told to reject (a brood fault at the commit step). */
function flakyStore(): { store: SessionStore; failCreate: { on: boolean } } {
  const inner = memorySessions();
  const failCreate = { on: false };
  return {
    failCreate,
    store: {
      create: (header) => (failCreate.on ? Promise.reject(new Error('disk full')) : inner.create(header)),
      append: (id, events) => inner.append(id, events),
      flush: (id) => inner.flush(id),
      read: (id) => inner.read(id),
      list: () => inner.list(),
    },
  };
}

function throwingSetupProvider(name: string): SubagentProvider {
  return {
    name,
    capabilities: { persona: true, toolFilter: true, depthLimit: true, agentOptions: true, outputSchema: true },
    inheritsParentContext: false,
    start: (request, ctx) =>
      ctx.createChild({
        request,
        setup: (child) => {
          child.tools.register(
            defineTool({
              name: 'private_tool',
              description: 'x',
              parameters: { type: 'object', properties: {} },
              execute: () => 'x',
            }),
          );
          throw new Error('provider hook exploded');
        },
      }),
    prepareContinuable: async () => ({}),
  };
}

describe('unpublished setup rolls back every failure', () => {
  let flaky = flakyStore();
  let parent: Agent;

  const build = async () => {
    flaky = flakyStore();
    h = harness({
      inner: flaky.store,
      models: [
        scriptedModels({
          id: 'scripted',
          models: [{ id: 'scripted', efforts: ['low', 'high'], defaultEffort: 'low' }],
          scripts: [
            { match: 'parent', turns: [{ text: 'parent one' }, { text: 'parent two' }] },
            { match: 'child', turns: [{ text: 'child done' }] },
          ],
        }),
      ],
    });
    h.brood.tools.register(
      defineTool({
        name: 'known',
        description: 'k',
        parameters: { type: 'object', properties: {} },
        execute: () => 'k',
      }),
    );
    h.brood.subagents.register(throwingSetupProvider('hooked'));
    parent = await h.brood.createAgent({ model: route });
    expect((await parent.run('parent one')).output).toBe('parent one');
  };

  const cases: [string, string, () => Record<string, unknown>, string?][] = [
    ['invalid toolFilter', 'INVALID_TOOL_FILTER', () => ({ toolFilter: { allow: ['known', 'nope'] } })],
    ['toolFilter with neither list', 'INVALID_TOOL_FILTER', () => ({ toolFilter: {} })],
    ['persona template error', 'TEMPLATE_ERROR', () => ({ persona: 'You are {{no_such_var}}.' })],
    ['malformed persona reference', 'TEMPLATE_ERROR', () => ({ persona: 'You are {{ agent_id }}.' })],
    ['unknown model', 'UNKNOWN_MODEL', () => ({ agentOptions: { model: 'nope' } })],
    ['unknown provider in route', 'UNKNOWN_MODEL', () => ({ agentOptions: { provider: 'ghost', model: 'scripted' } })],
    ['bad effort', 'INVALID_EFFORT', () => ({ agentOptions: { reasoningEffort: 'ultra' } })],
    ['throwing setup hook', 'SETUP_FAILED', () => ({}), 'hooked'],
    ['store create() rejects', 'STORE', () => ({})],
  ];

  for (const mode of ['one-shot', 'continuable'] as const) {
    for (const [label, code, fields, provider] of cases) {
      // A provider's setup hook belongs to ctx.createChild (one-shot starts); startContinuable has none.
      if (mode === 'continuable' && provider !== undefined) continue;
      it(`${mode}: ${label} → ${code}, leaving nothing`, async () => {
        await build();
        const sessionsBefore = await h!.brood.sessions.list();
        const agentsBefore = h!.liveAgents();
        if (code === 'STORE') flaky.failCreate.on = true;
        let error: unknown;
        try {
          if (mode === 'one-shot') {
            await h!.brood.subagents.start(provider ?? 'spawn', {
              parent,
              prompt: 'child',
              signal: new AbortController().signal,
              ...fields(),
            });
          } else {
            await h!.brood.subagents.startContinuable({
              provider: provider ?? 'spawn',
              label: 'c',
              signal: new AbortController().signal,
              request: { parent, prompt: 'child', ...fields() },
            });
          }
        } catch (e) {
          error = e;
        } finally {
          flaky.failCreate.on = false;
        }
        if (code === 'STORE') expect((error as Error).message).toContain('disk full');
        else expect((error as { code?: string }).code).toBe(code);
        if (code === 'SETUP_FAILED') expect((error as Error).message).toContain('provider hook exploded');

        expect(await h!.brood.sessions.list()).toEqual(sessionsBefore);
        expect(h!.liveAgents()).toBe(agentsBefore);
        expect(h!.starts).toEqual([]);
        expect(h!.ends).toEqual([]);
        // The parent keeps working, and no model request ever ran for a child.
        expect((await parent.run('parent two')).output).toBe('parent two');
        const requests = await allRequests(h!);
        expect(requests.map((r) => r.id)).toEqual([parent.id, parent.id]);
        // A private registration of the failed child never leaked into the global layer.
        expect(h!.brood.tools.view().names).toEqual(['known']);
        // And a later valid start still works.
        const run = await h!.brood.subagents.start('spawn', {
          parent,
          prompt: 'child',
          signal: new AbortController().signal,
        });
        expect((await run.result).output).toBe('child done');
        await run.dispose();
      });
    }
  }

  it('a rejected start from inside a parent turn is an errored tool result and the turn completes', async () => {
    h = harness({
      scripts: [
        {
          match: 'parent',
          turns: [{ toolCalls: [{ name: 'delegate', arguments: {} }] }, { text: 'after: {{results}}' }],
        },
        { match: 'child', turns: [{ text: 'never' }] },
      ],
    });
    h.brood.tools.register(
      defineTool({
        name: 'delegate',
        description: 'd',
        parameters: { type: 'object', properties: {} },
        execute: async (_args, ctx) => {
          const run = await h!.brood.subagents.start('spawn', {
            parent: ctx.agent!,
            prompt: 'child',
            signal: ctx.signal,
            persona: '{{nope}}',
          });
          return (await run.result).output;
        },
      }),
    );
    const agent = await h.brood.createAgent({ model: route });
    const result = await agent.run('parent go');
    expect(result.stopReason).toBe('completed');
    const toolResult = (await h.events(agent.id)).find((e) => e.type === 'tool/result');
    expect(toolResult?.data).toMatchObject({ isError: true, errorCode: 'TEMPLATE_ERROR' });
    expect(await h.brood.sessions.list()).toHaveLength(1);
  });
});
