/**
 * SPEC §7.1/§7.4/§7.5 and §8 through the runtime: max-tokens (truncated tool calls never run),
 * refusal, error with a diagnostic, usage summed over a turn's requests, and a later-turn template
 * error that ends only that turn.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood } from '../../../src/index.js';
import { defineTool, moduleAdapter, scriptedModels } from '../../../src/index.js';
import { eventsOf, ofType, turnEvents } from '../../support/events.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const truncating = moduleAdapter({
  id: 'truncating',
  models: ['m'],
  moduleUrl: new URL('./fixtures/truncating-adapter.mjs', import.meta.url),
});

const scripts = scriptedModels({
  id: 'scripted',
  scripts: [
    {
      match: 'capped',
      turns: [
        { toolCalls: [{ name: 'count', arguments: {} }] },
        { finish: 'max-tokens', text: 'cut off here' },
        { text: 'next turn fine' },
      ],
    },
    { match: 'refuse', turns: [{ finish: 'refusal', text: 'I will not' }] },
    {
      match: 'fail',
      turns: [{ toolCalls: [{ name: 'count', arguments: {} }], text: 'working on it' }, { finish: 'error' }],
    },
    {
      match: 'sum',
      turns: [
        { toolCalls: [{ name: 'count', arguments: {} }] },
        {
          toolCalls: [
            { name: 'count', arguments: {} },
            { name: 'count', arguments: {} },
          ],
        },
        { text: 'summed' },
      ],
    },
  ],
});

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  function setup(extra: Parameters<typeof makeBrood>[1] = {}): { brood: Brood; counted: string[] } {
    const counted: string[] = [];
    brood = makeBrood(runner, { models: [scripts, truncating], ...extra });
    brood.tools.register(
      defineTool({
        name: 'count',
        description: 'counts calls',
        parameters: z.object({}),
        concurrencySafe: true,
        execute: (_args, ctx) => {
          counted.push(ctx.callId);
          return `n=${counted.length}`;
        },
      }),
    );
    brood.tools.register(
      defineTool({
        name: 'boom',
        description: 'must never run when truncated',
        parameters: z.object({}).passthrough(),
        execute: (_args, ctx) => {
          counted.push(`boom:${ctx.callId}`);
          return 'boom';
        },
      }),
    );
    return { brood, counted };
  }

  it('max-tokens ends the turn at once with its partial text; the next turn is unaffected', async () => {
    const { brood, counted } = setup();
    const agent = await brood.createAgent({ model: route });
    const capped = await agent.run('capped output');
    expect(capped).toMatchObject({ stopReason: 'max-tokens', output: 'cut off here' });
    const next = await agent.run('capped again');
    expect(next).toMatchObject({ stopReason: 'completed', output: 'next turn fine' });

    const turn1 = turnEvents(await eventsOf(brood, agent.id), 1);
    expect(ofType(turn1, 'model/request')).toHaveLength(2);
    expect(ofType(turn1, 'assistant/message').map((e) => e.data.finish)).toEqual(['tool-calls', 'max-tokens']);
    expect(turn1.at(-1)?.data).toMatchObject({ reason: 'max-tokens' });
    expect(counted).toHaveLength(1);
  });

  it('tool calls truncated by the output cap never run, yet each gets a result', async () => {
    const { brood, counted } = setup();
    const agent = await brood.createAgent({ model: { provider: 'truncating', model: 'm' } });
    const result = await agent.run('truncate me');
    expect(result).toMatchObject({ stopReason: 'max-tokens', output: 'partial' });
    expect(counted).toEqual([]);

    const events = turnEvents(await eventsOf(brood, agent.id), 1);
    expect(ofType(events, 'tool/call')).toHaveLength(0);
    expect(ofType(events, 'tool/result').map((e) => [e.data.callId, e.data.isError])).toEqual([
      ['cut_0', true],
      ['cut_1', true],
    ]);
    expect(ofType(events, 'model/request')).toHaveLength(1); // sticky: no further request this turn
    expect(ofType(events, 'assistant/message')[0]?.data).toMatchObject({ finish: 'max-tokens' });
    // The history stays well-formed for the next turn.
    expect(await agent.run('now answer')).toMatchObject({ stopReason: 'completed', output: 'fine' });
  });

  it('refusal ends the turn refusal', async () => {
    const { brood } = setup();
    const agent = await brood.createAgent({ model: route });
    expect(await agent.run('please refuse')).toMatchObject({ stopReason: 'refusal', output: 'I will not' });
    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'assistant/message').map((e) => e.data.finish)).toEqual(['refusal']);
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual(['refusal']);
  });

  it('an error finish ends the turn error with a diagnostic, keeping the last text as output', async () => {
    const { brood } = setup();
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('fail later');
    expect(result.stopReason).toBe('error');
    expect(result.output).toBe('working on it');
    expect(result.diagnostic).toEqual(expect.any(String));
    expect(result.diagnostic).not.toBe('');
    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'assistant/message').map((e) => e.data.finish)).toEqual(['tool-calls', 'error']);
    expect(ofType(events, 'turn/end')[0]?.data).toEqual({ turn: 1, reason: 'error', diagnostic: result.diagnostic });
  });

  it("fallback 'error' ends the turn error with the adapter's diagnostic", async () => {
    brood = makeBrood(runner, { models: [scriptedModels({ id: 'strict', fallback: 'error' })] });
    const agent = await brood.createAgent({ model: { provider: 'strict', model: 'scripted' } });
    const result = await agent.run('no script for this');
    expect(result).toMatchObject({
      stopReason: 'error',
      diagnostic: "no script matched the prompt and fallback is 'error'",
    });
  });

  it("usage is summed over all of a turn's requests", async () => {
    const { brood, counted } = setup();
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('sum it up');
    expect(result).toMatchObject({ stopReason: 'completed', output: 'summed' });
    expect(counted).toHaveLength(3);

    const perRequest = ofType(await eventsOf(brood, agent.id), 'assistant/message').map(
      (e) => e.data.usage as { inputTokens: number; outputTokens: number },
    );
    expect(perRequest).toHaveLength(3);
    for (const usage of perRequest) expect(usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage).toEqual({
      inputTokens: perRequest.reduce((sum, u) => sum + u.inputTokens, 0),
      outputTokens: perRequest.reduce((sum, u) => sum + u.outputTokens, 0),
    });
    expect(result.usage.outputTokens).toBeGreaterThan(0);

    // SPEC §8 arithmetic on a one-request turn: 'hello world!' (12 chars) echoed → 3 in, 3 out.
    const echo = await brood.createAgent({ model: route });
    expect((await echo.run('hello world!')).usage).toEqual({ inputTokens: 3, outputTokens: 3 });
  });

  it('a template error in a later turn ends that turn error; the agent serves the next turn', async () => {
    const { brood } = setup();
    const removeVariable = brood.prompt.variable('mood', () => 'calm');
    brood.prompt.register({ name: 'mood', text: 'Mood: {{mood}}.' });
    const agent = await brood.createAgent({ model: route });
    expect((await agent.run('first')).stopReason).toBe('completed');
    removeVariable();
    const broken = await agent.run('second');
    expect(broken.stopReason).toBe('error');
    expect(broken.diagnostic).toEqual(expect.any(String));
    brood.prompt.variable('mood', () => 'better');
    expect((await agent.run('third')).stopReason).toBe('completed');

    const events = await eventsOf(brood, agent.id);
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual(['completed', 'error', 'completed']);
    expect(ofType(turnEvents(events, 2), 'model/request')).toHaveLength(0);
    expect(ofType(events, 'model/request').map((e) => e.data.system)).toEqual(['Mood: calm.', 'Mood: better.']);
  });
});
