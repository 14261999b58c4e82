/**
 * SPEC §3 Agent API and misuse rules: acceptance means the event is stored, status transitions,
 * DISPOSED after dispose/close, and creation failures that leave nothing behind.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBrood, defineTool, scriptedModels } from '../../src/index.js';
import type { Agent, Brood, CreateAgentOptions } from '../../src/index.js';
import { RUNNERS, deferred, eventsOf, makeBrood, ofType, rejectionCode, route, tapStore, thrownCode } from './helpers.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const models = [
  scriptedModels({ id: 'scripted', scripts: [{ match: 'hold', turns: [{ toolCalls: [{ name: 'hold', arguments: {} }] }, { text: 'held' }] }] }),
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

    expect(await rejectionCode(agent.send('hi'))).toBe('DISPOSED');
    expect(await rejectionCode(agent.run('hi'))).toBe('DISPOSED');
    expect(await rejectionCode(agent.tools.execute({ name: 'late', arguments: {} }))).toBe('DISPOSED');
    expect(thrownCode(() => agent.tools.register(tool))).toBe('DISPOSED');
    expect(thrownCode(() => agent.tools.restrict({ deny: [] }))).toBe('DISPOSED');
    expect(thrownCode(() => agent.prompt.register({ name: 'x', text: 'x' }))).toBe('DISPOSED');
    expect(thrownCode(() => agent.cancel())).toBe('DISPOSED');
    // Rejections, never synchronous throws, from async entry points.
    expect(() => void agent.send('x').catch(() => undefined)).not.toThrow();
    expect(ofType(await eventsOf(brood, agent.id), 'user/message')).toHaveLength(0);
  });

  it('after brood.close() every entry point fails DISPOSED and live agents are disposed', async () => {
    brood = makeBrood(runner);
    const agent = await brood.createAgent({ model: route });
    await brood.close();
    expect(agent.status).toBe('disposed');
    expect(await rejectionCode(agent.send('hi'))).toBe('DISPOSED');
    expect(await rejectionCode(brood.createAgent({ model: route }))).toBe('DISPOSED');
    expect(await rejectionCode(brood.resumeAgent(agent.id))).toBe('DISPOSED');
    expect(thrownCode(() => brood!.use({ name: 'p', install: () => Object.assign(() => undefined, { [Symbol.dispose]: () => undefined }) }))).toBe('DISPOSED');
    await brood.close(); // idempotent
  });

  it('creation failures reject with their code and create nothing', async () => {
    brood = makeBrood(runner, { models });
    brood.tools.register(defineTool({ name: 'known', description: 'x', parameters: z.object({}), execute: () => 'x' }));
    const existing = await brood.createAgent({ id: 'taken', model: route });
    const before = await brood.sessions.list();
    const attempt = (options: Partial<CreateAgentOptions>) => brood!.createAgent({ id: 'fresh', model: route, ...options } as CreateAgentOptions);

    expect(await rejectionCode(brood.createAgent({ id: 'taken', model: route }))).toBe('INVALID_CONFIG');
    expect(await rejectionCode(attempt({ model: { provider: 'nope', model: 'scripted' } }))).toBe('UNKNOWN_MODEL');
    expect(await rejectionCode(attempt({ model: { provider: 'scripted', model: 'nope' } }))).toBe('UNKNOWN_MODEL');
    expect(await rejectionCode(attempt({ model: { provider: 'thinking', model: 'deep', reasoningEffort: 'extreme' } }))).toBe('INVALID_EFFORT');
    expect(await rejectionCode(attempt({ depth: -1 }))).toBe('INVALID_DEPTH');
    expect(await rejectionCode(attempt({ depth: 1.5 }))).toBe('INVALID_DEPTH');
    expect(await rejectionCode(attempt({ toolFilter: { allow: ['missing'] } }))).toBe('INVALID_TOOL_FILTER');
    expect(await rejectionCode(attempt({ toolFilter: {} }))).toBe('INVALID_TOOL_FILTER');
    expect(await rejectionCode(attempt({ persona: 'I am {{nope}}' }))).toBe('TEMPLATE_ERROR');
    expect(await rejectionCode(attempt({ unknownOption: true } as Partial<CreateAgentOptions>))).toBe('INVALID_CONFIG');

    expect(await brood.sessions.list()).toEqual(before);
    expect(await rejectionCode(brood.resumeAgent('fresh'))).toBe('NOT_RESUMABLE');
    expect(await rejectionCode(brood.sessions.read('fresh'))).toBe('NOT_RESUMABLE');
    // The id is still free, and the failed attempts left no persona or filter behind.
    const fresh = await brood.createAgent({ id: 'fresh', model: route });
    expect(fresh.tools.view().names).toEqual(['known']);
    expect(fresh.prompt.assemble().system).toBe('');
    // An id that exists only in the store (its agent disposed) is taken too.
    await existing.dispose();
    expect(await rejectionCode(brood.createAgent({ id: 'taken', model: route }))).toBe('INVALID_CONFIG');
    // The omitted effort becomes the model's default and is logged.
    const thinker = await brood.createAgent({ model: { provider: 'thinking', model: 'deep' } });
    await thinker.run('think');
    expect(ofType(await eventsOf(brood, thinker.id), 'model/request')[0]?.data).toMatchObject({ provider: 'thinking', model: 'deep', reasoningEffort: 'low' });
  });

  it('resumeAgent: unknown id → NOT_RESUMABLE, a live agent → that same object', async () => {
    brood = makeBrood(runner);
    const agent: Agent = await brood.createAgent({ model: route });
    expect(await brood.resumeAgent(agent.id)).toBe(agent);
    expect(await rejectionCode(brood.resumeAgent('never-existed'))).toBe('NOT_RESUMABLE');
  });
});

describe('createBrood options', () => {
  it('rejects bad options synchronously with INVALID_CONFIG', () => {
    const faulty = scriptedModels({ id: 'faulty', scripts: [{ match: 'x', turns: [{ fault: 'exit' }] }] });
    expect(thrownCode(() => createBrood({ codeBusyTimeoutMs: 5_000, pool: { hangTimeoutMs: 5_000 } }))).toBe('INVALID_CONFIG');
    expect(thrownCode(() => createBrood({ pool: { hangTimeoutMs: 4_000 } }))).toBe('INVALID_CONFIG'); // default busy timeout is 5 s
    expect(thrownCode(() => createBrood({ runner: 'inline', models: [faulty] }))).toBe('INVALID_CONFIG');
    expect(thrownCode(() => createBrood({ nope: 1 } as never))).toBe('INVALID_CONFIG');
    expect(thrownCode(() => createBrood({ pool: { threads: 2, nope: 1 } } as never))).toBe('INVALID_CONFIG');
    expect(thrownCode(() => createBrood({ maxParallelToolCalls: 0 }))).toBe('INVALID_CONFIG');
    expect(thrownCode(() => createBrood({ runner: 'threads' } as never))).toBe('INVALID_CONFIG');
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
