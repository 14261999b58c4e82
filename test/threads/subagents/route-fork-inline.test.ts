/** SPEC §9 "Child route", forkProvider seeding, inlineProvider placement. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BroodOptions, SessionStore } from '../../../src/index.js';
import { defineTool, fileSessions, forkProvider, inlineProvider, scriptedModels } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import {
  closeAfterEach,
  firstRequest,
  type Harness,
  harness,
  mainThreadId,
  type Script,
  startChild,
} from './helpers.js';

const { open, dirs } = closeAfterEach();

const SCRIPTS: Script[] = [
  { match: 'parent', turns: [{ text: 'parent answer' }, { text: 'parent again' }] },
  { match: 'child', turns: [{ text: 'child answer' }] },
];

function twoProviders(inner?: SessionStore): Harness {
  const options: BroodOptions & { inner?: SessionStore } = {
    models: [
      scriptedModels({
        id: 'p1',
        models: [
          { id: 'm1', efforts: ['low', 'high'], defaultEffort: 'low' },
          { id: 'm2', efforts: ['low', 'high'], defaultEffort: 'low' },
        ],
        scripts: SCRIPTS,
      }),
      scriptedModels({
        id: 'p2',
        models: [{ id: 'x1', efforts: ['fast', 'slow'], defaultEffort: 'slow' }],
        scripts: SCRIPTS,
      }),
    ],
    ...(inner ? { inner } : {}),
  };
  const h = harness(options);
  open.push(h);
  return h;
}

const routeOf = (data: Record<string, unknown>) => ({
  provider: data.provider,
  model: data.model,
  reasoningEffort: data.reasoningEffort,
  maxTokens: data.maxTokens,
});

describe('child route', () => {
  it('agentOptions fields win; otherwise inherited; a model change drops inherited effort and maxTokens', async () => {
    const h = twoProviders();
    const parent = await h.brood.createAgent({
      model: { provider: 'p1', model: 'm1', reasoningEffort: 'high', maxTokens: 500 },
    });
    await parent.run('parent hello');
    const cases: [Record<string, unknown> | undefined, Record<string, unknown>][] = [
      [undefined, { provider: 'p1', model: 'm1', reasoningEffort: 'high', maxTokens: 500 }],
      [{ reasoningEffort: 'low' }, { provider: 'p1', model: 'm1', reasoningEffort: 'low', maxTokens: 500 }],
      [{ maxTokens: 77 }, { provider: 'p1', model: 'm1', reasoningEffort: 'high', maxTokens: 77 }],
      [{ model: 'm2' }, { provider: 'p1', model: 'm2', reasoningEffort: 'low', maxTokens: undefined }],
      [
        { model: 'm2', maxTokens: 77 },
        { provider: 'p1', model: 'm2', reasoningEffort: 'low', maxTokens: 77 },
      ],
      [
        { model: 'm2', reasoningEffort: 'high' },
        { provider: 'p1', model: 'm2', reasoningEffort: 'high', maxTokens: undefined },
      ],
      [
        { provider: 'p2', model: 'x1' },
        { provider: 'p2', model: 'x1', reasoningEffort: 'slow', maxTokens: undefined },
      ],
      [
        { provider: 'p2', model: 'x1', reasoningEffort: 'fast', maxTokens: 9 },
        { provider: 'p2', model: 'x1', reasoningEffort: 'fast', maxTokens: 9 },
      ],
    ];
    for (const [agentOptions, expected] of cases) {
      const run = await startChild(h, parent, 'child', agentOptions ? { agentOptions } : {});
      expect((await run.result).stopReason).toBe('completed');
      const request = await firstRequest(h, run.id);
      expect([agentOptions, routeOf(request)]).toEqual([agentOptions, expected]);
      const header = (await h.headers()).find((x) => x.id === run.id);
      expect(header?.model).toMatchObject(
        Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined)),
      );
      await run.dispose();
    }
    // A model change keeping an effort the new model does not list is a catalog error before the child exists.
    const before = await h.headers();
    await expectCode(
      startChild(h, parent, 'child', { agentOptions: { provider: 'p2', model: 'x1', reasoningEffort: 'high' } }),
      'INVALID_EFFORT',
    );
    expect(await h.headers()).toEqual(before);
  });

  it("inherits the parent's latest model/request route over its creation route", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brood-route-'));
    dirs.push(dir);
    const first = twoProviders(fileSessions(dir));
    const parent = await first.brood.createAgent({ model: { provider: 'p1', model: 'm1', reasoningEffort: 'high' } });
    await parent.run('parent hello');
    await first.brood.close();
    open.splice(open.indexOf(first), 1);

    const second = twoProviders(fileSessions(dir));
    const resumed = await second.brood.resumeAgent(parent.id, {
      model: { provider: 'p2', model: 'x1', reasoningEffort: 'fast' },
    });
    await resumed.run('parent again');
    const run = await startChild(second, resumed, 'child');
    await run.result;
    expect(routeOf(await firstRequest(second, run.id))).toEqual({
      provider: 'p2',
      model: 'x1',
      reasoningEffort: 'fast',
      maxTokens: undefined,
    });
    expect((await second.headers()).find((x) => x.id === parent.id)?.model).toMatchObject({
      provider: 'p1',
      model: 'm1',
    });
    await run.dispose();
  });
});

describe('forkProvider', () => {
  it("seeds the child with the parent's completed turns; its script matches the first message after the seed", async () => {
    const h = harness({
      scripts: [
        { match: 'fork task', turns: [{ text: 'fork reply' }] },
        {
          match: 'parent one',
          turns: [
            { text: 'first answer' },
            { toolCalls: [{ name: 'fork_now', arguments: {} }] },
            { text: 'parent saw: {{results}}' },
          ],
        },
      ],
    });
    open.push(h);
    let childId = '';
    h.brood.tools.register(
      defineTool({
        name: 'fork_now',
        description: 'forks from inside a turn',
        parameters: { type: 'object', properties: {} },
        execute: async (_args, ctx) => {
          const run = await h.brood.subagents.start('fork', {
            parent: ctx.agent!,
            prompt: 'fork task',
            signal: ctx.signal,
          });
          childId = run.id;
          const result = await run.result;
          await run.dispose();
          return result.output;
        },
      }),
    );
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('parent one');
    const second = await parent.run('parent two');
    expect(second.output).toBe('parent saw: fork reply');

    const parentEvents = await h.events(parent.id);
    const firstTurnEnd = parentEvents.findIndex((e) => e.type === 'turn/end');
    const expectedSeed = parentEvents.slice(0, firstTurnEnd + 1).filter((e) => e.type !== 'agent/descriptor');
    const { header, events } = await h.brood.sessions.read(childId);
    expect(header).toMatchObject({
      parentSession: parent.id,
      origin: 'subagent',
      delegationDepth: 1,
      seedLength: expectedSeed.length,
    });
    // The seed is turn 1 only: the turn in progress (whose message is 'parent two') is not inherited.
    expect(events.slice(0, expectedSeed.length).map((e) => [e.type, e.data])).toEqual(
      expectedSeed.map((e) => [e.type, e.data]),
    );
    expect(events.slice(0, expectedSeed.length).some((e) => JSON.stringify(e.data).includes('parent two'))).toBe(false);
    expect(events[expectedSeed.length]?.type).toBe('subagent/descriptor');
    expect(events[expectedSeed.length]?.data).toMatchObject({ provider: 'fork', mode: 'one-shot' });
    expect(ofType(events, 'assistant/message').at(-1)?.data.text).toBe('fork reply');
  });

  it('rejects agentOptions unless allowRouteChange', async () => {
    const h = twoProviders();
    h.brood.subagents.register(forkProvider({ name: 'fork2', allowRouteChange: true }));
    const parent = await h.brood.createAgent({ model: { provider: 'p1', model: 'm1' } });
    await parent.run('parent hello');
    const before = await h.headers();
    let error: { code?: string; details?: Record<string, unknown> } = {};
    await startChild(h, parent, 'child', { agentOptions: { model: 'm2' } }, 'fork').catch(
      (e: typeof error) => (error = e),
    );
    expect([error.code, error.details?.capability]).toEqual(['UNSUPPORTED_CAPABILITY', 'agentOptions']);
    expect(await h.headers()).toEqual(before);
    expect(h.brood.subagents.get('fork')?.capabilities.agentOptions).toBe(false);
    const run = await startChild(h, parent, 'child', { agentOptions: { model: 'm2' } }, 'fork2');
    await run.result;
    // The seed carries the parent's own model/request events; the child's own request is the last one.
    const requests = ofType(await h.events(run.id), 'model/request');
    expect(requests).toHaveLength(2);
    expect(routeOf(requests[0]!.data)).toMatchObject({ provider: 'p1', model: 'm1' });
    expect(routeOf(requests[1]!.data)).toMatchObject({ provider: 'p1', model: 'm2' });
    await run.dispose();
  });
});

describe('inlineProvider', () => {
  it("runs the child's driver on the main thread", async () => {
    const h = harness({ scripts: SCRIPTS });
    open.push(h);
    h.brood.subagents.register(inlineProvider());
    expect(h.brood.subagents.get('inline')?.capabilities).toEqual({
      persona: true,
      toolFilter: true,
      depthLimit: true,
      agentOptions: true,
      outputSchema: true,
      maxSteps: true,
    });
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('parent hello');
    const inline = await startChild(h, parent, 'child', {}, 'inline');
    const spawned = await startChild(h, parent, 'child');
    expect((await inline.result).output).toBe('child answer');
    await spawned.result;
    expect((await firstRequest(h, inline.id)).threadId).toBe(mainThreadId);
    expect((await firstRequest(h, parent.id)).threadId).not.toBe(mainThreadId);
    expect((await firstRequest(h, spawned.id)).threadId).not.toBe(mainThreadId);
    await Promise.all([inline.dispose(), spawned.dispose()]);
  });
});
