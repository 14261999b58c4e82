import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { RUN_CODE_SCHEMA, RUN_CODE_TOOL_NAME, renderSdk } from '../../../src/tools/code-mode-sdk.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import { createToolSystem, presentedSchemas } from '../../../src/tools/system.js';
import { fakeAgent, probeTool } from './helpers.js';

function setup() {
  const system = createToolSystem();
  const runs: string[] = [];
  for (const name of ['write', 'read']) system.global.register(probeTool(name, runs));
  const scope = system.createScope(() => fakeAgent());
  return { system, scope, runs };
}

describe('run_code schema', () => {
  it('requires description and code and explains tools.<name>() and console.log', () => {
    expect(RUN_CODE_SCHEMA.name).toBe(RUN_CODE_TOOL_NAME);
    expect(RUN_CODE_SCHEMA.parameters).toMatchObject({
      type: 'object',
      properties: { description: { type: 'string' }, code: { type: 'string' } },
      required: ['description', 'code'],
    });
    expect(RUN_CODE_SCHEMA.description).toContain('tools.<name>(');
    expect(RUN_CODE_SCHEMA.description).toContain('console.log');
    expect(Object.isFrozen(RUN_CODE_SCHEMA.parameters)).toBe(true);
  });
});

describe('presentedSchemas()', () => {
  it('native = visible tools; code = only run_code; both = visible + run_code; view() unchanged', () => {
    const { scope } = setup();
    const names = (mode: 'native' | 'code' | 'both') => presentedSchemas(scope.resolve(), mode).map((s) => s.name);
    expect(names('native')).toEqual(['read', 'write']);
    expect(names('code')).toEqual(['run_code']);
    expect(names('both')).toEqual(['read', 'write', 'run_code']);
    expect(scope.registry.view().names).toEqual(['read', 'write']);
    scope.registry.restrict({ deny: ['write'] });
    expect(names('both')).toEqual(['read', 'run_code']);
  });
});

describe('executeFromModel()', () => {
  it("under 'code' a direct call fails UNKNOWN_TOOL pointing to run_code; host calls are unaffected", async () => {
    const { scope, runs } = setup();
    const direct = await scope.executeFromModel({ name: 'read', arguments: {}, callId: 'c1' }, 'code');
    expect(direct.error?.code).toBe('UNKNOWN_TOOL');
    expect(direct.error?.message).toContain('run_code');
    expect(runs).toEqual([]);
    expect(await scope.registry.execute({ name: 'read', arguments: {} })).toMatchObject({
      isError: false,
      content: 'read',
    });
  });

  it("under 'native' and 'both' it executes like registry.execute, with the given callId", async () => {
    const { scope, system } = setup();
    let callId = '';
    system.global.register(
      defineTool({
        name: 'id',
        description: 'd',
        parameters: {},
        execute: (_a, ctx) => {
          callId = ctx.callId;
        },
      }),
    );
    for (const mode of ['native', 'both'] as const) {
      expect((await scope.executeFromModel({ name: 'read', arguments: '{}', callId: 'c' }, mode)).content).toBe('read');
      expect((await scope.executeFromModel({ name: 'ghost', arguments: {}, callId: 'c' }, mode)).error?.code).toBe(
        'UNKNOWN_TOOL',
      );
    }
    await scope.executeFromModel({ name: 'id', arguments: {}, callId: 'call_model_1' }, 'native');
    expect(callId).toBe('call_model_1');
  });

  it('run_code is never executed by the resolver', async () => {
    const { scope } = setup();
    for (const mode of ['native', 'code', 'both'] as const) {
      const result = await scope.executeFromModel(
        { name: 'run_code', arguments: { description: 'd', code: '' }, callId: 'c' },
        mode,
      );
      expect(result.error?.code).toBe('UNKNOWN_TOOL');
    }
    expect((await scope.registry.execute({ name: 'run_code', arguments: {} })).error?.code).toBe('UNKNOWN_TOOL');
  });
});

describe('sdk()', () => {
  function richSystem() {
    const system = createToolSystem();
    system.global.register(
      defineTool({
        name: 'search',
        description: 'Search files.\nReturns matches.',
        parameters: z.object({
          query: z.string().describe('What to look for'),
          limit: z.number().int().optional(),
          mode: z.enum(['fast', 'exact']),
          tags: z.array(z.union([z.string(), z.number()])),
          'odd-key': z.boolean().nullable().optional(),
        }),
        execute: () => [],
      }),
    );
    system.global.register(
      defineTool({ name: 'Alpha', description: 'Uses */ in text', parameters: {}, execute: () => 1 }),
    );
    system.global.register(
      defineTool({ name: 'my-tool', description: 'Dash name', parameters: z.object({}), execute: () => 1 }),
    );
    return system;
  }

  it('declares every visible tool, sorted, with doc comments and argument types', () => {
    const sdk = richSystem().global.sdk();
    expect(sdk.startsWith('declare const tools: {')).toBe(true);
    const order = ['Alpha', 'my-tool', 'search'].map((name) => sdk.indexOf(name));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(sdk).toContain('/** What to look for */');
    expect(sdk).toContain('query: string;');
    expect(sdk).toContain('limit?: number;');
    expect(sdk).toContain('mode: "fast" | "exact";');
    expect(sdk).toContain('tags: (string | number)[];');
    expect(sdk).toContain('"odd-key"?: boolean | null;');
    expect(sdk).toContain('"my-tool"(args: {}): Promise<unknown>;');
    expect(sdk).toContain('Uses *\\/ in text');
    expect(sdk).not.toContain('run_code');
  });

  it('is byte-identical for an unchanged view and follows the scope view', () => {
    const system = richSystem();
    const scope = system.createScope(() => fakeAgent());
    const first = scope.registry.sdk();
    expect(scope.registry.sdk()).toBe(first);
    expect(first).toBe(system.global.sdk());
    scope.registry.restrict({ deny: ['search'] });
    expect(scope.registry.sdk()).not.toContain('search(');
    expect(system.global.sdk()).toBe(first);
  });

  it('never declares run_code, even if handed one', () => {
    expect(renderSdk([RUN_CODE_SCHEMA])).toBe('declare const tools: {};\n');
    expect(createToolSystem().global.sdk()).toBe('declare const tools: {};\n');
  });

  it('uses the forAgent presentation', () => {
    const system = createToolSystem();
    const forAgent = vi.fn(() => ({
      description: 'agent view',
      parameters: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
    }));
    system.global.register(
      defineTool({ name: 't', description: 'global view', parameters: {}, execute: () => 1, forAgent }),
    );
    const sdk = system.createScope(() => fakeAgent()).registry.sdk();
    expect(sdk).toContain('/** agent view */');
    expect(sdk).toContain('x: string;');
  });
});
