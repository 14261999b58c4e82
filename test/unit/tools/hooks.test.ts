/**
 * createBrood's hooks on tool calls: beforeToolCall rewrites the arguments (validated again) or
 * answers in the tool's place, afterToolCall rewrites what the model reads, onToolError words a
 * body's throw; a throwing hook fails only its call and reaches onDiagnostic; a call the approval
 * gate denies reaches no hook; the session records what ran and what the model read.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Brood, type BroodOptions, createBrood, scriptedModels, type ToolHooks } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { echoTool } from '../../support/echo-tool.js';
import { route } from '../../support/route.js';
import { inlineBrood } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** A runtime whose model calls `echo` once with `args` and then answers with what it read. */
function runtime(hooks: ToolHooks, args: unknown = { text: 'hi' }, options: BroodOptions = {}) {
  const diagnostics: string[] = [];
  const runs: unknown[] = [];
  brood = inlineBrood({
    hooks,
    onDiagnostic: (message) => diagnostics.push(message),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'go', turns: [{ toolCalls: [{ name: 'echo', arguments: args }] }, { text: '{{results}}' }] },
        ],
      }),
    ],
    ...options,
  });
  brood.tools.register(echoTool(runs, { throwing: true }));
  return { b: brood, diagnostics, runs };
}

async function eventData(b: Brood, agentId: string, type: 'tool/call' | 'tool/result') {
  const events = (await b.sessions.read(agentId)).events;
  return events.find((event) => event.type === type)?.data as Record<string, unknown> | undefined;
}

describe('beforeToolCall', () => {
  it('sees the call and its context; a returned call runs with its arguments, recorded in tool/result', async () => {
    const seen: unknown[] = [];
    const { b, runs } = runtime({
      beforeToolCall: (call, ctx) => {
        seen.push({ call, ctxCallId: ctx.callId, ctxAgent: ctx.agent?.id });
        return { ...call, arguments: { text: 'rewritten' } };
      },
    });
    const agent = await b.createAgent({ model: route });
    expect((await agent.run('go')).output).toBe('ran rewritten');
    expect(runs).toEqual(['rewritten']);
    const callId = (await eventData(b, agent.id, 'tool/call'))?.callId;
    expect(seen).toEqual([
      {
        call: { name: 'echo', arguments: { text: 'hi' }, callId, agentId: agent.id, depth: 0 },
        ctxCallId: callId,
        ctxAgent: agent.id,
      },
    ]);
    // What the model asked for, then what ran and what the model read.
    expect(await eventData(b, agent.id, 'tool/call')).toMatchObject({ arguments: JSON.stringify({ text: 'hi' }) });
    expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({
      content: 'ran rewritten',
      arguments: JSON.stringify({ text: 'rewritten' }),
    });
  });

  it('a rewrite the schema refuses is an INVALID_ARGS result and the tool does not run', async () => {
    const { b, runs } = runtime({ beforeToolCall: (call) => ({ ...call, arguments: { text: 42 } }) });
    const agent = await b.createAgent({ model: route });
    await agent.run('go');
    expect(runs).toEqual([]);
    expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({ isError: true, errorCode: 'INVALID_ARGS' });
  });

  it('a { result } answers in the tool’s place: the tool does not run, the model reads it', async () => {
    const { b, runs } = runtime({ beforeToolCall: () => ({ result: 'cached answer' }) });
    const agent = await b.createAgent({ model: route });
    expect((await agent.run('go')).output).toBe('cached answer');
    expect(runs).toEqual([]);
    expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({ isError: false, content: 'cached answer' });
  });

  it('a { result, isError: true } is an error result', async () => {
    const { b } = runtime({ beforeToolCall: () => ({ result: 'not for this tenant', isError: true }) });
    const agent = await b.createAgent({ model: route });
    await agent.run('go');
    expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({
      isError: true,
      content: 'not for this tenant',
    });
  });

  it('returning nothing runs the call as the model made it', async () => {
    const { b, runs } = runtime({ beforeToolCall: () => undefined });
    const agent = await b.createAgent({ model: route });
    expect((await agent.run('go')).output).toBe('ran hi');
    expect(runs).toEqual(['hi']);
    expect(await eventData(b, agent.id, 'tool/result')).not.toHaveProperty('arguments');
  });
});

describe('afterToolCall', () => {
  it('rewrites what the model reads, and the session records the redacted result', async () => {
    const seen: unknown[] = [];
    const { b } = runtime({
      afterToolCall: (call, result) => {
        seen.push({ name: call.name, result });
        return { content: String(result.content).replace('hi', '[redacted]'), isError: result.isError };
      },
    });
    const agent = await b.createAgent({ model: route });
    expect((await agent.run('go')).output).toBe('ran [redacted]');
    expect(seen).toEqual([{ name: 'echo', result: { content: 'ran hi', isError: false } }]);
    expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({ content: 'ran [redacted]', isError: false });
  });

  it('sees an error result too, and may turn it into a success', async () => {
    const { b } = runtime({ afterToolCall: () => ({ content: 'recovered', isError: false }) }, { text: 'throw' });
    const agent = await b.createAgent({ model: route });
    expect((await agent.run('go')).output).toBe('recovered');
    expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({ content: 'recovered', isError: false });
  });
});

describe('onToolError', () => {
  it('gets the thrown value and the call; its text is what the model reads', async () => {
    const seen: unknown[] = [];
    const { b, diagnostics } = runtime(
      {
        onToolError: (error, call) => {
          seen.push([error, call.name]);
          return 'the echo service is down; try later';
        },
      },
      { text: 'throw' },
    );
    const agent = await b.createAgent({ model: route });
    expect((await agent.run('go')).output).toBe('the echo service is down; try later');
    expect(seen).toEqual([[expect.any(TypeError), 'echo']]);
    expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({ isError: true });
    expect(diagnostics).toEqual([]);
  });

  it('returning nothing keeps <Name>: <message> for the model and the stack for onDiagnostic', async () => {
    const { b, diagnostics } = runtime({ onToolError: () => undefined }, { text: 'throw' });
    const agent = await b.createAgent({ model: route });
    expect((await agent.run('go')).output).toBe('TypeError: echo broke');
    expect(diagnostics).toEqual([expect.stringContaining('tool "echo" threw TypeError: echo broke')]);
  });
});

describe('a hook that throws', () => {
  const hookError = () => new Error('hook bug');
  it.each<[string, ToolHooks, unknown]>([
    [
      'beforeToolCall',
      {
        beforeToolCall: () => {
          throw hookError();
        },
      },
      { text: 'hi' },
    ],
    [
      'afterToolCall',
      {
        afterToolCall: () => {
          throw hookError();
        },
      },
      { text: 'hi' },
    ],
    [
      'onToolError',
      {
        onToolError: () => {
          throw hookError();
        },
      },
      { text: 'throw' },
    ],
  ])(
    '%s: fails that call with its message, the turn goes on, the stack reaches onDiagnostic',
    async (hook, hooks, args) => {
      const { b, diagnostics } = runtime(hooks, args);
      const agent = await b.createAgent({ model: route });
      const result = await agent.run('go');
      expect(result.stopReason).toBe('completed');
      expect(result.output).toBe('Error: hook bug');
      expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({ isError: true, content: 'Error: hook bug' });
      expect(diagnostics).toEqual([expect.stringContaining(`${hook} hook threw on tool "echo"`)]);
      expect(diagnostics[0]).toMatch(/\n\s+at /);
    },
  );

  it('a hook answering with a shape it may not is a failure of that call too', async () => {
    const { b, diagnostics } = runtime({ afterToolCall: () => ({ content: 42, isError: false }) as never });
    const agent = await b.createAgent({ model: route });
    await agent.run('go');
    expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({ isError: true });
    expect(diagnostics).toEqual([expect.stringContaining('afterToolCall hook threw')]);
  });
});

it('a call the approval policy denies reaches no hook', async () => {
  const heard: string[] = [];
  const { b, runs } = runtime(
    {
      beforeToolCall: () => void heard.push('before'),
      afterToolCall: () => void heard.push('after'),
      onToolError: () => void heard.push('error'),
    },
    { text: 'hi' },
    { approvals: { policy: () => 'deny' } },
  );
  const agent = await b.createAgent({ model: route });
  await agent.run('go');
  expect(runs).toEqual([]);
  expect(heard).toEqual([]);
  expect(await eventData(b, agent.id, 'tool/result')).toMatchObject({ isError: true });
});

it.each(['beforeToolCall', 'afterToolCall', 'onToolError', 'unknownHook'])(
  'createBrood refuses hooks.%s that is not a known hook function: INVALID_CONFIG',
  (name) => {
    expectCode(() => createBrood({ runner: 'inline', hooks: { [name]: 'not a function' } as never }), 'INVALID_CONFIG');
  },
);
