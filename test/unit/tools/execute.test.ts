import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { BroodError } from '../../../src/errors.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import { createToolSystem } from '../../../src/tools/system.js';
import type { ToolContext } from '../../../src/types.js';
import { fakeAgent } from './helpers.js';

function returning(name: string, value: unknown) {
  return defineTool({ name, description: 'd', parameters: {}, execute: () => value });
}

function setup() {
  const system = createToolSystem();
  const agent = fakeAgent('a1');
  const scope = system.createScope(() => agent);
  return { system, scope, agent };
}

describe('execution results', () => {
  it.each<[string, unknown, string]>([
    ['a string as is', 'plain "text"', 'plain "text"'],
    ['undefined as empty', undefined, ''],
    ['an object as compact JSON', { a: [1, 2], b: null }, '{"a":[1,2],"b":null}'],
    ['a number as JSON', 42, '42'],
  ])('%s', async (_label, value, content) => {
    const { system } = setup();
    system.global.register(returning('t', value));
    const result = await system.global.execute({ name: 't', arguments: {} });
    expect(result).toEqual(value === undefined ? { isError: false, content } : { isError: false, content, value });
  });

  it('awaits async bodies', async () => {
    const { system } = setup();
    system.global.register(
      defineTool({ name: 't', description: 'd', parameters: {}, execute: async () => ({ ok: true }) }),
    );
    expect(await system.global.execute({ name: 't', arguments: {} })).toEqual({
      isError: false,
      content: '{"ok":true}',
      value: { ok: true },
    });
  });

  it('a thrown BroodError keeps its code; a plain error has no code', async () => {
    const { system } = setup();
    system.global.register(
      defineTool({
        name: 'coded',
        description: 'd',
        parameters: {},
        execute: () => {
          throw new BroodError('DEPTH_EXCEEDED', 'too deep');
        },
      }),
    );
    system.global.register(
      defineTool({
        name: 'plain',
        description: 'd',
        parameters: {},
        execute: async () => {
          throw new Error('boom');
        },
      }),
    );
    expect(await system.global.execute({ name: 'coded', arguments: {} })).toEqual({
      isError: true,
      content: 'Error: too deep',
      error: { code: 'DEPTH_EXCEEDED', message: 'too deep' },
    });
    expect(await system.global.execute({ name: 'plain', arguments: {} })).toEqual({
      isError: true,
      content: 'Error: boom',
      error: { message: 'boom' },
    });
  });

  it('an unknown tool resolves UNKNOWN_TOOL with the error shape', async () => {
    const { scope } = setup();
    const result = await scope.registry.execute({ name: 'ghost', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.error?.code).toBe('UNKNOWN_TOOL');
    expect(result.content).toBe(`Error: ${result.error?.message}`);
  });
});

describe('argument validation', () => {
  const zodTool = defineTool({
    name: 'z',
    description: 'd',
    parameters: z.object({ n: z.number() }),
    execute: (a) => a.n * 2,
  });
  const jsonTool = defineTool({
    name: 'j',
    description: 'd',
    parameters: { type: 'object', properties: { s: { type: 'string' } }, required: ['s'] },
    execute: (a) => a,
  });

  it('string arguments are parsed as JSON', async () => {
    const { system } = setup();
    system.global.register(zodTool);
    expect(await system.global.execute({ name: 'z', arguments: '{"n":4}' })).toMatchObject({
      isError: false,
      content: '8',
    });
  });

  it.each<[string, unknown]>([
    ['bad JSON string (zod)', '{"n":'],
    ['schema mismatch (zod)', { n: 'four' }],
    ['missing argument (zod)', {}],
  ])('%s -> INVALID_ARGS, body never runs', async (_label, args) => {
    const { system } = setup();
    const body = vi.fn();
    system.global.register(
      defineTool({ name: 'z', description: 'd', parameters: z.object({ n: z.number() }), execute: body }),
    );
    const result = await system.global.execute({ name: 'z', arguments: args });
    expect(result.error?.code).toBe('INVALID_ARGS');
    expect(result.isError).toBe(true);
    expect(body).not.toHaveBeenCalled();
  });

  it.each<[string, unknown]>([
    ['bad JSON string (JSON Schema)', 'not json'],
    ['schema mismatch (JSON Schema)', { s: 5 }],
  ])('%s -> INVALID_ARGS', async (_label, args) => {
    const { system } = setup();
    system.global.register(jsonTool);
    expect((await system.global.execute({ name: 'j', arguments: args })).error?.code).toBe('INVALID_ARGS');
  });

  it('the body receives parsed (zod-transformed) arguments', async () => {
    const { system } = setup();
    system.global.register(
      defineTool({
        name: 't',
        description: 'd',
        parameters: z.object({ s: z.string().transform((s) => s.length) }),
        execute: (a) => a.s,
      }),
    );
    expect(await system.global.execute({ name: 't', arguments: { s: 'abc' } })).toMatchObject({ value: 3 });
  });
});

describe('abort and context', () => {
  it('a signal aborted before dispatch -> ABORTED_BEFORE_DISPATCH, body never runs', async () => {
    const { system } = setup();
    const body = vi.fn();
    system.global.register(defineTool({ name: 't', description: 'd', parameters: {}, execute: body }));
    const controller = new AbortController();
    controller.abort();
    const result = await system.global.execute({ name: 't', arguments: {}, signal: controller.signal });
    expect(result.error?.code).toBe('ABORTED_BEFORE_DISPATCH');
    expect(body).not.toHaveBeenCalled();
  });

  it('aborted while running: success becomes ABORTED, a failure stays a failure', async () => {
    const { system } = setup();
    const controller = new AbortController();
    system.global.register(
      defineTool({
        name: 'ok',
        description: 'd',
        parameters: {},
        execute: async () => {
          controller.abort();
          return 'done';
        },
      }),
    );
    expect((await system.global.execute({ name: 'ok', arguments: {}, signal: controller.signal })).error?.code).toBe(
      'ABORTED',
    );
    const second = new AbortController();
    const bad = defineTool({
      name: 'bad2',
      description: 'd',
      parameters: {},
      execute: () => {
        second.abort();
        throw new Error('failed');
      },
    });
    system.global.register(bad);
    expect(await system.global.execute({ name: 'bad2', arguments: {}, signal: second.signal })).toEqual({
      isError: true,
      content: 'Error: failed',
      error: { message: 'failed' },
    });
  });

  it('context: callId given or generated, agent per scope, a never-aborting signal by default', async () => {
    const { system, scope, agent } = setup();
    const contexts: ToolContext[] = [];
    system.global.register(
      defineTool({
        name: 'ctx',
        description: 'd',
        parameters: {},
        execute: (_a, ctx) => {
          contexts.push(ctx);
        },
      }),
    );
    await scope.registry.execute({ name: 'ctx', arguments: {}, callId: 'call_given' });
    await system.global.execute({ name: 'ctx', arguments: {} });
    expect(contexts[0]).toMatchObject({ callId: 'call_given', agent });
    expect(contexts[1]?.agent).toBeUndefined();
    expect(contexts[1]?.callId).toMatch(/^call_[0-9a-z]+$/);
    expect(contexts[1]?.signal.aborted).toBe(false);
  });

  it('the agent is read lazily, at call time', async () => {
    const system = createToolSystem();
    let current = fakeAgent('early');
    const scope = system.createScope(() => current);
    let seen: string | undefined;
    system.global.register(
      defineTool({
        name: 'who',
        description: 'd',
        parameters: {},
        execute: (_a, ctx) => {
          seen = ctx.agent?.id;
        },
      }),
    );
    current = fakeAgent('late');
    await scope.registry.execute({ name: 'who', arguments: {} });
    expect(seen).toBe('late');
  });

  it('a non-JSON return value resolves as an error instead of rejecting', async () => {
    const { system } = setup();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    system.global.register(returning('cyc', cyclic));
    const result = await system.global.execute({ name: 'cyc', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.error?.code).toBe('INTERNAL');
  });
});

describe('concurrency classification', () => {
  it('parallel only for concurrencySafe true or a predicate returning exactly true', () => {
    const { scope, system } = setup();
    const params = z.object({ path: z.string() });
    system.global.register(
      defineTool({ name: 'safe', description: 'd', parameters: params, execute: () => 1, concurrencySafe: true }),
    );
    system.global.register(
      defineTool({ name: 'unsafe', description: 'd', parameters: params, execute: () => 1, concurrencySafe: false }),
    );
    system.global.register(defineTool({ name: 'default', description: 'd', parameters: params, execute: () => 1 }));
    system.global.register(
      defineTool({
        name: 'pred',
        description: 'd',
        parameters: params,
        execute: () => 1,
        concurrencySafe: (a) => a.path.startsWith('/tmp'),
      }),
    );
    system.global.register(
      defineTool({
        name: 'truthy',
        description: 'd',
        parameters: params,
        execute: () => 1,
        concurrencySafe: (() => 1) as never,
      }),
    );
    system.global.register(
      defineTool({
        name: 'throws',
        description: 'd',
        parameters: params,
        execute: () => 1,
        concurrencySafe: () => {
          throw new Error('x');
        },
      }),
    );
    const args = { path: '/tmp/a' };
    expect(scope.classify('safe', args)).toBe('parallel');
    expect(scope.classify('safe', '{"path":"/x"}')).toBe('parallel');
    expect(scope.classify('unsafe', args)).toBe('exclusive');
    expect(scope.classify('default', args)).toBe('exclusive');
    expect(scope.classify('pred', args)).toBe('parallel');
    expect(scope.classify('pred', { path: '/etc' })).toBe('exclusive');
    expect(scope.classify('truthy', args)).toBe('exclusive');
    expect(scope.classify('throws', args)).toBe('exclusive');
    expect(scope.classify('ghost', args)).toBe('exclusive');
    expect(scope.classify('safe', { path: 3 })).toBe('exclusive');
    expect(scope.classify('safe', '{oops')).toBe('exclusive');
    scope.registry.restrict({ deny: ['safe'] });
    expect(scope.classify('safe', args)).toBe('exclusive');
  });
});
