/**
 * SPEC §3 Agent API and misuse rules: acceptance means the event is stored, status transitions,
 * DISPOSED after dispose/close, and creation failures that leave nothing behind.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Agent, Brood, CreateAgentOptions } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { deferred } from '../../support/deferred.js';
import { eventsOf, ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';
import { tapStore } from '../../support/tap-store.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const models = [
  scriptedModels({
    id: 'scripted',
    scripts: [{ match: 'hold', turns: [{ toolCalls: [{ name: 'hold', arguments: {} }] }, { text: 'held' }] }],
  }),
  scriptedModels({ id: 'thinking', models: [{ id: 'deep', efforts: ['low', 'high'], defaultEffort: 'low' }] }),
];

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('send() resolves to the message id once its user/message event is in the store', async () => {
    const tap = tapStore();
    brood = makeBrood(runner, { sessions: tap.store });
    const agent = await brood.createAgent({ model: route });
    const id = await agent.send('hello there');
    const stored = ofType(tap.log(agent.id), 'user/message');
    expect(stored.map((e) => e.data)).toEqual([{ id, text: 'hello there', source: 'user' }]);
    await agent.whenIdle();
    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'turn/start').map((e) => e.data.messageIds)).toEqual([[id]]);
  });

  it('status goes idle → running → idle → disposed, and whenIdle waits for queued messages', async () => {
    brood = makeBrood(runner, { models });
    const entered = deferred();
    const release = deferred();
    let statusInTool = '';
    brood.tools.register(
      defineTool({
        name: 'hold',
        description: 'holds the turn',
        parameters: z.object({}),
        execute: async (_args, ctx) => {
          statusInTool = ctx.agent?.status ?? 'none';
          entered.resolve();
          await release.promise;
          return 'ok';
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    expect(agent.status).toBe('idle');
    await agent.whenIdle(); // nothing queued: resolves at once

    await agent.send('hold on');
    await agent.send('second message');
    expect(agent.status).toBe('running');
    let idle = false;
    const idlePromise = agent.whenIdle().then(() => (idle = true));
    await entered.promise;
    expect(statusInTool).toBe('running');
    expect(idle).toBe(false);
    release.resolve();
    await idlePromise;
    expect(agent.status).toBe('idle');
    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual(['completed', 'completed']); // both ran before idle
    await agent.dispose();
    expect(agent.status).toBe('disposed');
    await agent.dispose(); // idempotent
  });

  it('every call on a disposed agent fails DISPOSED', async () => {
    brood = makeBrood(runner);
    const agent = await brood.createAgent({ model: route });
    await agent.dispose();
    const tool = defineTool({ name: 'late', description: 'x', parameters: z.object({}), execute: () => 'x' });

    await expectCode(agent.send('hi'), 'DISPOSED');
    await expectCode(agent.run('hi'), 'DISPOSED');
    await expectCode(agent.tools.execute({ name: 'late', arguments: {} }), 'DISPOSED');
    expectCode(() => agent.tools.register(tool), 'DISPOSED');
    expectCode(() => agent.tools.restrict({ deny: [] }), 'DISPOSED');
    expectCode(() => agent.prompt.register({ name: 'x', text: 'x' }), 'DISPOSED');
    expectCode(() => agent.cancel(), 'DISPOSED');
    // Rejections, never synchronous throws, from async entry points.
    expect(() => void agent.send('x').catch(() => undefined)).not.toThrow();
    expect(ofType(await eventsOf(brood, agent.id), 'user/message')).toHaveLength(0);
  });

  it('after brood.close() every entry point fails DISPOSED and live agents are disposed', async () => {
    brood = makeBrood(runner);
    const agent = await brood.createAgent({ model: route });
    await brood.close();
    expect(agent.status).toBe('disposed');
    await expectCode(agent.send('hi'), 'DISPOSED');
    await expectCode(brood.createAgent({ model: route }), 'DISPOSED');
    await expectCode(brood.resumeAgent(agent.id), 'DISPOSED');
    expectCode(
      () =>
        brood!.use({ name: 'p', install: () => Object.assign(() => undefined, { [Symbol.dispose]: () => undefined }) }),
      'DISPOSED',
    );
    await brood.close(); // idempotent
  });

  it('creation failures reject with their code and create nothing', async () => {
    brood = makeBrood(runner, { models });
    brood.tools.register(defineTool({ name: 'known', description: 'x', parameters: z.object({}), execute: () => 'x' }));
    const existing = await brood.createAgent({ id: 'taken', model: route });
    const before = await brood.sessions.list();
    const attempt = (options: Partial<CreateAgentOptions>) =>
      brood!.createAgent({ id: 'fresh', model: route, ...options } as CreateAgentOptions);

    await expectCode(brood.createAgent({ id: 'taken', model: route }), 'INVALID_CONFIG');
    await expectCode(attempt({ model: { provider: 'nope', model: 'scripted' } }), 'UNKNOWN_MODEL');
    await expectCode(attempt({ model: { provider: 'scripted', model: 'nope' } }), 'UNKNOWN_MODEL');
    await expectCode(
      attempt({ model: { provider: 'thinking', model: 'deep', reasoningEffort: 'extreme' } }),
      'INVALID_EFFORT',
    );
    await expectCode(attempt({ depth: -1 }), 'INVALID_DEPTH');
    await expectCode(attempt({ depth: 1.5 }), 'INVALID_DEPTH');
    await expectCode(attempt({ toolFilter: { allow: ['missing'] } }), 'INVALID_TOOL_FILTER');
    await expectCode(attempt({ toolFilter: {} }), 'INVALID_TOOL_FILTER');
    await expectCode(attempt({ persona: 'I am {{nope}}' }), 'TEMPLATE_ERROR');
    await expectCode(attempt({ unknownOption: true } as Partial<CreateAgentOptions>), 'INVALID_CONFIG');

    expect(await brood.sessions.list()).toEqual(before);
    await expectCode(brood.resumeAgent('fresh'), 'NOT_RESUMABLE');
    await expectCode(brood.sessions.read('fresh'), 'NOT_RESUMABLE');
    // The id is still free, and the failed attempts left no persona or filter behind.
    const fresh = await brood.createAgent({ id: 'fresh', model: route });
    expect(fresh.tools.view().names).toEqual(['known']);
    expect(fresh.prompt.assemble().system).toBe('');
    // An id that exists only in the store (its agent disposed) is taken too.
    await existing.dispose();
    await expectCode(brood.createAgent({ id: 'taken', model: route }), 'INVALID_CONFIG');
    // The omitted effort becomes the model's default and is logged.
    const thinker = await brood.createAgent({ model: { provider: 'thinking', model: 'deep' } });
    await thinker.run('think');
    expect(ofType(await eventsOf(brood, thinker.id), 'model/request')[0]?.data).toMatchObject({
      provider: 'thinking',
      model: 'deep',
      reasoningEffort: 'low',
    });
  });

  it('resumeAgent: unknown id → NOT_RESUMABLE, a live agent → that same object', async () => {
    brood = makeBrood(runner);
    const agent: Agent = await brood.createAgent({ model: route });
    expect(await brood.resumeAgent(agent.id)).toBe(agent);
    await expectCode(brood.resumeAgent('never-existed'), 'NOT_RESUMABLE');
  });
});

describe('createBrood options', () => {
  it('rejects bad options synchronously with INVALID_CONFIG', () => {
    const faulty = scriptedModels({ id: 'faulty', scripts: [{ match: 'x', turns: [{ fault: 'exit' }] }] });
    expectCode(() => createBrood({ codeBusyTimeoutMs: 5_000, pool: { hangTimeoutMs: 5_000 } }), 'INVALID_CONFIG');
    expectCode(() => createBrood({ pool: { hangTimeoutMs: 4_000 } }), 'INVALID_CONFIG'); // default busy timeout is 5 s
    expectCode(() => createBrood({ runner: 'inline', models: [faulty] }), 'INVALID_CONFIG');
    expectCode(() => createBrood({ nope: 1 } as never), 'INVALID_CONFIG');
    expectCode(() => createBrood({ pool: { threads: 2, nope: 1 } } as never), 'INVALID_CONFIG');
    expectCode(() => createBrood({ maxParallelToolCalls: 0 }), 'INVALID_CONFIG');
    expectCode(() => createBrood({ runner: 'threads' } as never), 'INVALID_CONFIG');
  });

  it('accepts the boundary cases it must accept', async () => {
    const faulty = scriptedModels({ id: 'faulty', scripts: [{ match: 'x', turns: [{ fault: 'exit' }] }] });
    const ok = [
      createBrood({ runner: 'inline', codeBusyTimeoutMs: 1_000, pool: { hangTimeoutMs: 1_001 } }),
      createBrood({ runner: 'worker', pool: { threads: 1 }, models: [faulty] }),
    ];
    await Promise.all(ok.map((b) => b.close()));
  });
});
