/** SPEC §15 step limits, typed structured output and signals on send/createAgent/resumeAgent. */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type Brood,
  createBrood,
  defineTool,
  type SubagentProvider,
  scriptedModels,
  subagentTool,
} from '../../../src/index.js';
import { runtimeOf } from '../../../src/runtime/plugin-access.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';

const loopForever = { toolCalls: [{ name: 'noop', arguments: {} }] };
const noop = defineTool({
  name: 'noop',
  description: 'does nothing',
  parameters: z.object({}),
  execute: () => 'nothing',
});

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function loopingBrood(options: { maxSteps?: number } = {}): Brood {
  const b = createBrood({
    pool: { threads: 2 },
    ...options,
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'loop', turns: Array.from({ length: 20 }, () => loopForever) },
          {
            match: 'delegate',
            turns: [
              { toolCalls: [{ name: 'subagent', arguments: { description: 'loop child', prompt: 'loop please' } }] },
              { text: '{{results}}' },
            ],
          },
        ],
      }),
    ],
  });
  b.tools.register(noop);
  return b;
}

describe('maxSteps', () => {
  it('top level: the turn ends max-steps after maxSteps requests, with a diagnostic; the last calls do not run', async () => {
    brood = loopingBrood();
    const agent = await brood.createAgent({ model: route, maxSteps: 3 });
    const result = await agent.run('loop');
    expect(result.stopReason).toBe('max-steps');
    expect(result.diagnostic).toMatch(/step limit.*maxSteps 3/);
    const events = (await brood.sessions.read(agent.id)).events;
    expect(events.filter((e) => e.type === 'model/request')).toHaveLength(3);
    const results = events.filter((e) => e.type === 'tool/result').map((e) => e.data.isError);
    expect(results).toEqual([false, false, true]);
    expect(events.filter((e) => e.type === 'turn/end').map((e) => e.data.reason)).toEqual(['max-steps']);
    // The agent keeps working afterwards (the history is well-formed): the next turn gets its own 3 steps.
    expect((await agent.run('again')).stopReason).toBe('max-steps');
    expect((await brood.sessions.read(agent.id)).events.filter((e) => e.type === 'model/request')).toHaveLength(6);
  });

  it('createBrood maxSteps is the default for every agent (and 100 when unset)', async () => {
    brood = loopingBrood({ maxSteps: 2 });
    const agent = await brood.createAgent({ model: route });
    expect((await agent.run('loop')).stopReason).toBe('max-steps');
    expect(runtimeOf(createBrood({ runner: 'inline' })).agentDeps.limits.maxSteps).toBe(100);
  });

  it('a resumed agent keeps its maxSteps (recorded in its descriptor)', async () => {
    brood = loopingBrood();
    const agent = await brood.createAgent({ model: route, maxSteps: 2 });
    await agent.dispose();
    const resumed = await brood.resumeAgent(agent.id);
    expect((await resumed.run('loop')).stopReason).toBe('max-steps');
    expect((await brood.sessions.read(agent.id)).events.filter((e) => e.type === 'model/request')).toHaveLength(2);
  });

  it('anything but a positive safe integer is INVALID_CONFIG, at createBrood, createAgent and subagentTool', async () => {
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, '3']) {
      await expectCode(() => createBrood({ runner: 'inline', maxSteps: bad as number }), 'INVALID_CONFIG');
      await expectCode(
        () => subagentTool({ provider: 'spawn', maxSteps: bad as number }).install(createBrood({ runner: 'inline' })),
        'INVALID_CONFIG',
      );
    }
    brood = createBrood({ runner: 'inline' });
    await expectCode(brood.createAgent({ model: route, maxSteps: 0 }), 'INVALID_CONFIG');
  });

  it('delegation: a child that hits its limit renders the step-limit headline with its partial output', async () => {
    brood = loopingBrood();
    brood.use(subagentTool({ provider: 'spawn', maxSteps: 2 }));
    const lead = await brood.createAgent({ model: route });
    const result = await lead.run('delegate');
    expect(result.stopReason).toBe('completed');
    const parentEvents = (await brood.sessions.read(lead.id)).events;
    const toolResult = parentEvents.find((e) => e.type === 'tool/result');
    expect(toolResult?.data.isError).toBe(true);
    expect(String(toolResult?.data.content)).toMatch(
      /^Error: subagent run hit its step limit\nDiagnostic: the turn reached its step limit/,
    );
    const child = (await brood.sessions.list()).find((h) => h.parentSession === lead.id)!;
    const childEvents = (await brood.sessions.read(child.id)).events;
    expect(childEvents.find((e) => e.type === 'subagent/descriptor')?.data.maxSteps).toBe(2);
    expect(childEvents.filter((e) => e.type === 'model/request')).toHaveLength(2);
  });

  it('providers advertise maxSteps; one without it cannot mount a subagentTool with maxSteps (INVALID_CONFIG)', async () => {
    brood = loopingBrood();
    expect(brood.subagents.get('spawn')?.capabilities.maxSteps).toBe(true);
    expect(brood.subagents.get('fork')?.capabilities.maxSteps).toBe(true);
    const spawn = brood.subagents.get('spawn')!;
    const limited: SubagentProvider = {
      ...spawn,
      name: 'limited',
      capabilities: { persona: true, toolFilter: true, depthLimit: true, agentOptions: true, outputSchema: true },
    };
    brood.use(subagentTool({ provider: 'limited', toolName: 'limited_sub', maxSteps: 5 }));
    await expectCode(() => brood!.subagents.register(limited), 'INVALID_CONFIG');
    expect(brood.subagents.list()).not.toContain('limited');
    // The runtime's own gate refuses the field too.
    const parent = await brood.createAgent({ model: route });
    brood.use(subagentTool({ provider: 'plain', toolName: 'plain_sub' }));
    brood.subagents.register({ ...limited, name: 'plain' });
    await expectCode(
      brood.subagents.start('plain', { parent, prompt: 'x', signal: new AbortController().signal, maxSteps: 2 }),
      'UNSUPPORTED_CAPABILITY',
    );
  });
});

describe('typed structured output on run()', () => {
  function structuredBrood(turns: unknown[]): Brood {
    return createBrood({
      pool: { threads: 1 },
      models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'answer', turns: turns as never }] })],
    });
  }

  it('zod: the validated value comes back typed; invalid arguments are an errored tool result the model can retry', async () => {
    brood = structuredBrood([
      { toolCalls: [{ name: 'structured_output', arguments: { city: 'Oslo', population: 'many' } }] },
      { toolCalls: [{ name: 'structured_output', arguments: { city: 'Oslo', population: 709_000 } }] },
      { text: 'Recorded.' },
    ]);
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('answer please', {
      outputSchema: z.object({ city: z.string(), population: z.number() }),
    });
    expect(result.stopReason).toBe('completed');
    const population: number | undefined = result.structured?.population;
    expect(population).toBe(709_000);
    expect(result.structured).toEqual({ city: 'Oslo', population: 709_000 });
    const events = (await brood.sessions.read(agent.id)).events;
    expect(events.filter((e) => e.type === 'tool/result').map((e) => e.data.isError)).toEqual([true, false]);
    // Presented to the model for this turn, never part of the agent's registry.
    expect(events.find((e) => e.type === 'model/request')?.data.tools).toContain('structured_output');
    expect(agent.tools.view().has('structured_output')).toBe(false);
    // Gone on the next turn.
    await agent.run('plain');
    expect(events.length).toBeGreaterThan(0);
    const later = (await brood.sessions.read(agent.id)).events.filter((e) => e.type === 'model/request').at(-1);
    expect(later?.data.tools).not.toContain('structured_output');
  });

  it('JSON Schema works too; a turn that ends without a valid call ends error with a diagnostic', async () => {
    brood = structuredBrood([{ text: 'I will not use the tool.' }]);
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('answer', {
      outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    });
    expect(result.stopReason).toBe('error');
    expect(result.diagnostic).toMatch(/without a valid structured_output call/);
    expect(result.structured).toBeUndefined();
    expect((await brood.sessions.read(agent.id)).events.find((e) => e.type === 'turn/end')?.data.reason).toBe('error');
  });

  it('a schema that is neither zod nor JSON Schema rejects INVALID_ARGS (a per-call argument) and accepts nothing', async () => {
    brood = structuredBrood([]);
    const agent = await brood.createAgent({ model: route });
    await expectCode(agent.run('answer', { outputSchema: 42 as never }), 'INVALID_ARGS');
    expect((await brood.sessions.read(agent.id)).events.some((e) => e.type === 'user/message')).toBe(false);
  });
});

describe('signals on send, createAgent and resumeAgent', () => {
  it('an already-aborted signal rejects ABORTED and creates nothing', async () => {
    brood = createBrood({ pool: { threads: 1 } });
    const aborted = AbortSignal.abort();
    await expectCode(brood.createAgent({ model: route, signal: aborted }), 'ABORTED');
    expect(await brood.sessions.list()).toEqual([]);
    const agent = await brood.createAgent({ model: route });
    await expectCode(agent.send('hello', { signal: aborted }), 'ABORTED');
    expect((await brood.sessions.read(agent.id)).events.some((e) => e.type === 'user/message')).toBe(false);
    await agent.dispose();
    await expectCode(brood.resumeAgent(agent.id, { signal: aborted }), 'ABORTED');
    expect(runtimeOf(brood).agents.has(agent.id)).toBe(false);
  });

  it('a signal that aborts while the call is in flight rejects ABORTED; the agent is not published', async () => {
    brood = createBrood({ pool: { threads: 1 } });
    const controller = new AbortController();
    const creating = brood.createAgent({ model: route, id: 'racer', signal: controller.signal });
    controller.abort();
    await expectCode(creating, 'ABORTED');
    expect(runtimeOf(brood).agents.has('racer')).toBe(false);
    // The abort is seen before the session's header is written: nothing was created.
    expect((await brood.sessions.list()).map((header) => header.id)).not.toContain('racer');
    const agent = await brood.createAgent({ model: route });
    const sending = new AbortController();
    const sent = agent.send('never runs', { signal: sending.signal });
    sending.abort();
    await expectCode(sent, 'ABORTED');
    await agent.whenIdle();
    // It was written before the abort, so its turn ends aborted without any model request.
    const events = (await brood.sessions.read(agent.id)).events;
    expect(events.some((e) => e.type === 'model/request')).toBe(false);
  });

  it('send without a signal still resolves to the message id; a non-signal is INVALID_ARGS', async () => {
    brood = createBrood({ pool: { threads: 1 } });
    const agent = await brood.createAgent({ model: route });
    expect(await agent.send('hi')).toMatch(/^msg/);
    await expectCode(agent.send('hi', { signal: 'no' as never }), 'INVALID_ARGS');
    await expectCode(brood.createAgent({ model: route, signal: 'no' as never }), 'INVALID_CONFIG');
  });
});
