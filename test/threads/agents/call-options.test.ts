/**
 * A call's options are checked at the call. `run('x', 42)` is INVALID_ARGS instead of
 * a run whose options were silently ignored (send too); an `outputSchema` whose root is not an object
 * schema — which no tool call could ever meet — is refused up front with INVALID_ARGS (run and
 * subagents.start); `structured_output` is reserved like `run_code` (RESERVED_TOOL_NAME).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Agent, Brood } from '../../../src/index.js';
import { createBrood, defineTool, subagentTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { eventsOf, ofType } from '../../support/events.js';
import { route } from '../../support/route.js';

let brood: Brood;
let agent: Agent;
beforeEach(async () => {
  brood = createBrood({ runner: 'inline' });
  agent = await brood.createAgent({ model: route });
});
afterEach(async () => {
  await brood.close();
});

async function userMessages(id = agent.id): Promise<number> {
  return ofType(await eventsOf(brood, id), 'user/message').length;
}

const tool = (name: string) =>
  defineTool({ name, description: name, parameters: { type: 'object' }, execute: () => name });

describe('per-call options', () => {
  const notOptions: [string, unknown][] = [
    ['a number', 42],
    ['a string', 'fast'],
    ['an array', [AbortSignal.abort()]],
    ['a function', () => undefined],
    ['an unknown key', { signl: new AbortController().signal }],
    ['a signal that is not an AbortSignal', { signal: { aborted: true } }],
  ];
  for (const [what, options] of notOptions) {
    it(`run and send refuse ${what} with INVALID_ARGS and accept nothing`, async () => {
      await expectCode(agent.run('x', options as never), 'INVALID_ARGS');
      await expectCode(agent.send('x', options as never), 'INVALID_ARGS');
      expect(await userMessages()).toBe(0);
    });
  }

  it('no options, undefined and {} still run', async () => {
    for (const options of [undefined, {}]) expect((await agent.run('x', options)).stopReason).toBe('completed');
    expect((await agent.run('x')).stopReason).toBe('completed');
    expect(typeof (await agent.send('y', {}))).toBe('string');
  });
});

describe('outputSchema needs an object root', () => {
  const roots: [string, unknown][] = [
    ['z.string()', z.string()],
    ['z.array(...)', z.array(z.string())],
    ['a union of objects (anyOf at the root)', z.union([z.object({ a: z.string() }), z.object({ b: z.number() })])],
    ['JSON Schema type string', { type: 'string' }],
    ['JSON Schema without a type', { properties: { a: { type: 'string' } } }],
  ];
  for (const [what, outputSchema] of roots) {
    it(`run refuses ${what} with INVALID_ARGS before the message is accepted`, async () => {
      await expectCode(agent.run('x', { outputSchema: outputSchema as never }), 'INVALID_ARGS');
      expect(await userMessages()).toBe(0);
    });
  }

  it('subagents.start refuses a non-object root with INVALID_ARGS before a child exists', async () => {
    const before = (await brood.sessions.list()).length;
    const start = brood.subagents.start('spawn', {
      parent: agent,
      prompt: 'p',
      signal: new AbortController().signal,
      outputSchema: { type: 'string' },
    });
    await expectCode(start, 'INVALID_ARGS');
    expect((await brood.sessions.list()).length).toBe(before);
  });

  it('an object root (zod or JSON Schema) is accepted', async () => {
    for (const outputSchema of [z.object({ a: z.string() }), { type: 'object', properties: {} }]) {
      const result = await agent.run('x', { outputSchema });
      // The echo model never calls structured_output: the turn runs and ends error, saying so.
      expect(result.stopReason).toBe('error');
      expect(result.diagnostic).toMatch(/structured_output/);
    }
  });
});

describe('structured_output is reserved', () => {
  it('registering it globally or on an agent is RESERVED_TOOL_NAME, like run_code', () => {
    for (const name of ['structured_output', 'run_code']) {
      expectCode(() => brood.tools.register(tool(name)), 'RESERVED_TOOL_NAME');
      expectCode(() => agent.tools.register(tool(name)), 'RESERVED_TOOL_NAME');
    }
    expect(brood.tools.view().has('structured_output')).toBe(false);
    expect(agent.tools.view().has('structured_output')).toBe(false);
  });

  it('a delegation tool cannot take the name either', () => {
    expectCode(
      () => brood.use(subagentTool({ provider: 'spawn', toolName: 'structured_output' })),
      'RESERVED_TOOL_NAME',
    );
    expect(brood.tools.view().names).toEqual([]);
  });
});
