import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/tools/define-tool.js';
import { createToolSystem } from '../../../src/tools/system.js';
import type { Agent, ToolDefinition, ToolFilter } from '../../../src/types.js';
import { expectCode } from '../../support/codes.js';
import { fakeAgent, probeTool } from './helpers.js';

function setup(globalNames: string[] = ['read', 'write', 'search']) {
  const onChange = vi.fn();
  const system = createToolSystem({ onChange });
  const runs: string[] = [];
  const disposers = new Map(globalNames.map((n) => [n, system.global.register(probeTool(n, runs))]));
  const agent = fakeAgent();
  const scope = system.createScope(() => agent);
  return { system, scope, runs, disposers, onChange, agent };
}

describe('registration', () => {
  it('DUPLICATE_TOOL within one layer, shadowing allowed across layers', async () => {
    const { system, scope, runs } = setup(['read']);
    expectCode(() => system.global.register(probeTool('read')), 'DUPLICATE_TOOL');
    scope.registry.register(probeTool('local'));
    expectCode(() => scope.registry.register(probeTool('local')), 'DUPLICATE_TOOL');
    const shadow = defineTool({ name: 'read', description: 'shadow', parameters: {}, execute: () => 'shadowed' });
    scope.registry.register(shadow);
    expect(scope.resolve().find((t) => t.name === 'read')).toMatchObject({
      layer: 'agent',
      schema: { description: 'shadow' },
    });
    expect(await scope.registry.execute({ name: 'read', arguments: {} })).toMatchObject({ content: 'shadowed' });
    expect(runs).toEqual([]);
    // The shadow is for this agent only.
    const other = system.createScope(() => undefined);
    expect(other.resolve().find((t) => t.name === 'read')?.layer).toBe('global');
    expect(system.global.view().schemas[0]?.description).toBe('probe read');
  });

  it('run_code is reserved in every layer', () => {
    const { system, scope } = setup([]);
    const tool = defineTool({ name: 'run_code', description: 'x', parameters: {}, execute: () => 1 });
    expectCode(() => system.global.register(tool), 'RESERVED_TOOL_NAME');
    expectCode(() => scope.registry.register(tool), 'RESERVED_TOOL_NAME');
  });

  it('register rechecks hand-made definitions (INVALID_CONFIG)', () => {
    const { system } = setup([]);
    const bad = { name: 'bad name', description: 'd', parameters: {}, parse: (a: unknown) => a, execute: () => 1 };
    expectCode(() => system.global.register(bad as ToolDefinition), 'INVALID_CONFIG');
    expectCode(() => system.global.register({ name: 'ok' } as ToolDefinition), 'INVALID_CONFIG');
  });

  it('register disposers are idempotent and only remove their own registration', () => {
    const { system, disposers } = setup(['read']);
    const dispose = disposers.get('read')!;
    dispose();
    const again = system.global.register(probeTool('read'));
    dispose();
    dispose[Symbol.dispose]();
    expect(system.global.view().names).toEqual(['read']);
    again();
    expect(system.global.view().names).toEqual([]);
  });

  it('view names are sorted by code unit and never include run_code', () => {
    const { system, scope } = setup(['b', 'B', 'a', '_x', 'Z']);
    expect(system.global.view().names).toEqual(['B', 'Z', '_x', 'a', 'b']);
    expect(scope.registry.view().has('run_code')).toBe(false);
    expect(scope.registry.view().has('a')).toBe(true);
  });

  it('a scope of many tools is sorted the same way (own tools among globals)', () => {
    const names = Array.from({ length: 48 }, (_, i) => `t${(i * 37) % 48}`);
    const { scope } = setup(names.slice(0, 40));
    for (const name of names.slice(36)) scope.registry.register(probeTool(name));
    const expected = [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(scope.registry.view().names).toEqual(expected);
  });

  it('knownGlobalNames lists the registered global tools', () => {
    const { system, scope } = setup(['b', 'a']);
    scope.registry.register(probeTool('local'));
    expect(system.knownGlobalNames()).toEqual(['a', 'b']);
  });

  it('two systems share nothing', () => {
    const one = createToolSystem({});
    const two = createToolSystem({});
    one.global.register(probeTool('t'));
    expect(two.global.view().names).toEqual([]);
  });
});

describe('restriction validation', () => {
  it('restrict() on the global registry throws SCOPE_REQUIRED synchronously', () => {
    const { system } = setup();
    expectCode(() => system.global.restrict({ deny: [] }), 'SCOPE_REQUIRED');
  });

  it.each<[string, unknown]>([
    ['empty filter', {}],
    ['unknown name in allow', { allow: ['reed'] }],
    ['unknown name in deny', { deny: ['nope'] }],
    ['run_code', { deny: ['run_code'] }],
    ['non-array allow', { allow: 'read' }],
    ['non-string entry', { allow: [1] }],
    ['not an object', null],
  ])('%s -> INVALID_TOOL_FILTER', (_label, filter) => {
    const { scope } = setup();
    expectCode(() => scope.registry.restrict(filter as ToolFilter), 'INVALID_TOOL_FILTER');
    expect(scope.registry.view().names).toEqual(['read', 'search', 'write']);
  });

  it('an agent-local-only name is not restrictable', () => {
    const { scope } = setup();
    scope.registry.register(probeTool('mine'));
    expectCode(() => scope.registry.restrict({ allow: ['mine'] }), 'INVALID_TOOL_FILTER');
  });

  it('the message names the offending entry and lists the known global tools', () => {
    const { scope } = setup();
    const error = expectCode(() => scope.registry.restrict({ allow: ['read', 'reed'] }), 'INVALID_TOOL_FILTER');
    expect(error.message).toContain('reed');
    for (const known of ['read', 'search', 'write']) expect(error.message).toContain(known);
  });

  it('{ allow: [] } hides every global tool; { deny: [] } hides nothing; own tools stay', () => {
    const { system, scope } = setup();
    scope.registry.register(probeTool('mine'));
    const dispose = scope.registry.restrict({ allow: [] });
    expect(scope.registry.view().names).toEqual(['mine']);
    dispose();
    scope.registry.restrict({ deny: [] });
    expect(scope.registry.view().names).toEqual(['mine', 'read', 'search', 'write']);
    expect(system.global.view().names).toEqual(['read', 'search', 'write']);
  });

  it('filter arrays are copied: later caller mutation has no effect', () => {
    const { scope } = setup();
    const allow = ['read'];
    const deny = ['write'];
    scope.registry.restrict({ allow, deny });
    allow.push('search');
    deny.length = 0;
    expect(scope.registry.view().names).toEqual(['read']);
    expect(scope.filters()).toEqual([{ allow: ['read'], deny: ['write'] }]);
  });

  it('installFilter({ validate: false }) accepts names not registered yet', () => {
    const { system, scope } = setup();
    scope.installFilter({ allow: ['later'] }, { validate: false });
    expect(scope.registry.view().names).toEqual([]);
    system.global.register(probeTool('later'));
    expect(scope.registry.view().names).toEqual(['later']);
    expectCode(() => scope.installFilter({}, { validate: false }), 'INVALID_TOOL_FILTER');
  });

  it('restrictions intersect and each disposer lifts only its own (idempotently)', () => {
    const { scope } = setup();
    const one = scope.registry.restrict({ allow: ['read', 'write'] });
    const two = scope.registry.restrict({ deny: ['write'] });
    expect(scope.registry.view().names).toEqual(['read']);
    two();
    two();
    expect(scope.registry.view().names).toEqual(['read', 'write']);
    one[Symbol.dispose]();
    one();
    expect(scope.registry.view().names).toEqual(['read', 'search', 'write']);
  });
});

describe('forAgent presentation', () => {
  const seen: (Agent | undefined)[] = [];
  const adaptive = defineTool({
    name: 'adaptive',
    description: 'default text',
    parameters: z.object({ q: z.string() }),
    execute: () => 'ran',
    forAgent: (agent) => {
      seen.push(agent);
      if (agent?.id === 'hidden') return false;
      if (agent?.id === 'custom') return { description: 'custom text', parameters: { type: 'object', properties: {} } };
      return {};
    },
  });

  it('false hides the tool from that agent (view and execution), an object replaces the schema', async () => {
    const system = createToolSystem();
    system.global.register(adaptive);
    const hidden = system.createScope(() => fakeAgent('hidden'));
    const custom = system.createScope(() => fakeAgent('custom'));
    const plain = system.createScope(() => fakeAgent('plain'));
    expect(hidden.registry.view().names).toEqual([]);
    const result = await hidden.registry.execute({ name: 'adaptive', arguments: { q: 'x' } });
    expect(result.error?.code).toBe('UNKNOWN_TOOL');
    expect(custom.registry.view().schemas).toEqual([
      { name: 'adaptive', description: 'custom text', parameters: { type: 'object', properties: {} } },
    ]);
    expect(plain.registry.view().schemas[0]?.description).toBe('default text');
    expect(system.global.view().schemas[0]?.description).toBe('default text');
    expect(seen).toContain(undefined);
    expect(hidden.classify('adaptive', { q: 'x' })).toBe('exclusive');
  });

  it('a tool without forAgent is presented to every agent by one frozen schema; one with it, per agent', () => {
    const system = createToolSystem();
    system.global.register(adaptive);
    system.global.register(probeTool('plain'));
    const [first, second] = [system.createScope(() => fakeAgent('a')), system.createScope(() => fakeAgent('b'))];
    const schemaOf = (scope: typeof first, name: string) => scope.resolve().find((t) => t.name === name)?.schema;
    expect(schemaOf(first, 'plain')).toBe(schemaOf(second, 'plain'));
    expect(Object.isFrozen(schemaOf(first, 'plain'))).toBe(true);
    expect(schemaOf(first, 'adaptive')).not.toBe(schemaOf(second, 'adaptive'));
  });

  it('is applied after filtering and a throwing forAgent hides the tool', () => {
    const system = createToolSystem();
    const spy = vi.fn(() => ({}));
    system.global.register(
      defineTool({ name: 'f', description: 'd', parameters: {}, execute: () => 1, forAgent: spy }),
    );
    system.global.register(
      defineTool({
        name: 'boom',
        description: 'd',
        parameters: {},
        execute: () => 1,
        forAgent: () => {
          throw new Error('x');
        },
      }),
    );
    const scope = system.createScope(() => fakeAgent());
    scope.registry.restrict({ deny: ['f'] });
    spy.mockClear();
    expect(scope.registry.view().names).toEqual([]);
    expect(spy).not.toHaveBeenCalled();
  });
});

describe('change events', () => {
  it('global listeners fire on global changes only; agent listeners on global, own tools and own restrictions', () => {
    const { system, scope, onChange, disposers } = setup(['read']);
    const globalFn = vi.fn();
    const agentFn = vi.fn();
    system.global.on('change', globalFn);
    scope.registry.on('change', agentFn);
    onChange.mockClear();

    system.global.register(probeTool('x'));
    expect([globalFn.mock.calls.length, agentFn.mock.calls.length, onChange.mock.calls.length]).toEqual([1, 1, 1]);
    const local = scope.registry.register(probeTool('mine'));
    expect([globalFn.mock.calls.length, agentFn.mock.calls.length, onChange.mock.calls.length]).toEqual([1, 2, 1]);
    const restriction = scope.registry.restrict({ deny: ['read'] });
    expect([globalFn.mock.calls.length, agentFn.mock.calls.length, onChange.mock.calls.length]).toEqual([1, 3, 1]);
    restriction();
    local();
    disposers.get('read')!();
    expect([globalFn.mock.calls.length, agentFn.mock.calls.length, onChange.mock.calls.length]).toEqual([2, 6, 2]);
    // Idempotent disposers do not fire again.
    restriction();
    local();
    expect(agentFn.mock.calls.length).toBe(6);
  });

  it('another scope does not hear this scope change; failing listeners are contained', () => {
    const { system, scope } = setup(['read']);
    const other = system.createScope(() => undefined);
    const otherFn = vi.fn();
    other.registry.on('change', otherFn);
    const after = vi.fn();
    scope.registry.on('change', () => {
      throw new Error('listener bug');
    });
    scope.registry.on('change', after);
    expect(() => scope.registry.register(probeTool('mine'))).not.toThrow();
    expect(after).toHaveBeenCalledTimes(1);
    expect(otherFn).not.toHaveBeenCalled();
  });

  it('on() disposers unsubscribe idempotently; the same fn twice is two subscriptions', () => {
    const { system } = setup([]);
    const fn = vi.fn();
    const a = system.global.on('change', fn);
    system.global.on('change', fn);
    system.global.register(probeTool('x'));
    expect(fn).toHaveBeenCalledTimes(2);
    a();
    a();
    system.global.register(probeTool('y'));
    expect(fn).toHaveBeenCalledTimes(3);
  });
});

describe('scope dispose', () => {
  it('drops the agent layer, its restrictions and listeners', async () => {
    const { system, scope, onChange } = setup(['read']);
    const fn = vi.fn();
    scope.registry.on('change', fn);
    const local = scope.registry.register(probeTool('mine'));
    scope.registry.restrict({ deny: ['read'] });
    onChange.mockClear();
    fn.mockClear();
    scope.dispose();
    scope.dispose();
    // Dropping an agent layer changes no other view: the system-wide onChange is for global changes.
    expect(onChange).toHaveBeenCalledTimes(0);
    expect(scope.resolve()).toEqual([]);
    system.global.register(probeTool('z'));
    local();
    expect(fn).not.toHaveBeenCalled();
    expectCode(() => scope.registry.register(probeTool('again')), 'DISPOSED');
    expectCode(() => scope.registry.restrict({ deny: [] }), 'DISPOSED');
    expect((await scope.registry.execute({ name: 'read', arguments: {} })).error?.code).toBe('DISPOSED');
    expect(system.global.view().names).toEqual(['read', 'z']);
  });
});
