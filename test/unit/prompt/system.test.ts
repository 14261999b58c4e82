/** The prompt system's assembly: sections in order, their validation, and shadowing between layers. */
import { describe, expect, it, vi } from 'vitest';
import { PERSONA_SECTION, registerPersona } from '../../../src/prompt/index.js';
import type { Agent, ToolView } from '../../../src/types.js';
import { expectCode } from '../../support/codes.js';
import { names, scopeOptions, setup, toolView } from './helpers.js';

describe('assembly basics', () => {
  it('joins non-empty sections with a blank line and lists them', () => {
    const { prompt } = setup();
    prompt.register({ name: 'a', text: 'Alpha' });
    prompt.register({ name: 'b', text: '   \n ' });
    prompt.register({ name: 'c', text: () => 'Gamma' });
    prompt.register({ name: 'd', text: '' });
    expect(prompt.assemble()).toEqual({
      system: 'Alpha\n\nGamma',
      sections: [
        { name: 'a', text: 'Alpha' },
        { name: 'c', text: 'Gamma' },
      ],
    });
  });

  it('is empty with no sections', () => {
    expect(setup().prompt.assemble()).toEqual({ system: '', sections: [] });
  });

  it('sorts by order (default 100), ties by registration', () => {
    const { prompt } = setup();
    prompt.register({ name: 'late', order: 200, text: 'late' });
    prompt.register({ name: 'default1', text: 'd1' });
    prompt.register({ name: 'early', order: -5, text: 'early' });
    prompt.register({ name: 'hundred', order: 100, text: 'h' });
    prompt.register({ name: 'default2', text: 'd2' });
    prompt.register({ name: 'frac', order: 99.5, text: 'f' });
    expect(names(prompt.assemble())).toEqual(['early', 'frac', 'default1', 'hundred', 'default2', 'late']);
  });

  it('uses one registration counter across global and agent layers for ties', () => {
    const { system, prompt } = setup();
    const scope = system.createScope(scopeOptions());
    prompt.register({ name: 'g1', text: 'g1' });
    scope.registry.register({ name: 'a1', text: 'a1' });
    prompt.register({ name: 'g2', text: 'g2' });
    expect(names(scope.assemble())).toEqual(['g1', 'a1', 'g2']);
  });

  it('templates function output and passes the context', () => {
    const agent = { id: 'agent-x' } as Agent;
    const tools = toolView(['read']);
    const { system, prompt } = setup();
    const seen: unknown[] = [];
    prompt.register({
      name: 'fn',
      text: (ctx) => {
        seen.push(ctx);
        return `I am {{agent_id}} with ${ctx.tools.names.join(',')}`;
      },
    });
    const scope = system.createScope(scopeOptions({ agent: () => agent, tools: () => tools }));
    expect(scope.assemble().system).toBe('I am a1 with read');
    expect(seen).toEqual([{ agent, tools }]);
  });

  it('global assemble uses no agent, the global tool view, and no built-in values', () => {
    const { prompt } = setup(['g_tool']);
    let ctxSeen: unknown;
    prompt.register({
      name: 's',
      text: (ctx) => {
        ctxSeen = ctx;
        return ctx.tools.names.join(',');
      },
    });
    expect(prompt.assemble().system).toBe('g_tool');
    expect(ctxSeen).toMatchObject({ agent: undefined });
    prompt.register({ name: 'uses_builtin', text: '{{model}}' });
    const error = expectCode(() => prompt.assemble(), 'TEMPLATE_ERROR');
    expect(error.details).toMatchObject({ section: 'uses_builtin', variable: 'model' });
  });

  it('calls the scope agent and tools lazily, at each assembly', () => {
    const { system } = setup();
    const agent = vi.fn(() => undefined);
    let current: ToolView = toolView([]);
    const tools = vi.fn(() => current);
    const scope = system.createScope(scopeOptions({ agent, tools }));
    expect(agent).not.toHaveBeenCalled();
    scope.registry.register({ name: 'guide', tool: 'read', text: 'use read' });
    expect(scope.assemble().system).toBe('');
    current = toolView(['read']);
    expect(scope.assemble().system).toBe('use read');
    expect(agent).toHaveBeenCalledTimes(2);
  });

  it('a throwing text function is TEMPLATE_ERROR naming the section, cause kept', () => {
    const { prompt } = setup();
    const boom = new Error('boom');
    prompt.register({
      name: 'bad',
      text: () => {
        throw boom;
      },
    });
    const error = expectCode(() => prompt.assemble(), 'TEMPLATE_ERROR');
    expect(error.details).toMatchObject({ section: 'bad' });
    expect(error.cause).toBe(boom);
  });

  it('a text function returning a non-string is TEMPLATE_ERROR', () => {
    const { prompt } = setup();
    prompt.register({ name: 'bad', text: (() => 42) as unknown as () => string });
    expectCode(() => prompt.assemble(), 'TEMPLATE_ERROR');
  });
});

describe('section validation and duplicates', () => {
  it.each([
    ['missing name', { text: 'x' }],
    ['empty name', { name: '', text: 'x' }],
    ['numeric name', { name: 3, text: 'x' }],
    ['missing text', { name: 'a' }],
    ['numeric text', { name: 'a', text: 5 }],
    ['NaN order', { name: 'a', text: 'x', order: Number.NaN }],
    ['infinite order', { name: 'a', text: 'x', order: Number.POSITIVE_INFINITY }],
    ['string order', { name: 'a', text: 'x', order: '1' }],
    ['empty tool', { name: 'a', text: 'x', tool: '' }],
    ['null section', null],
  ])('rejects %s with INVALID_CONFIG', (_label, section) => {
    const { prompt, onChange } = setup();
    expectCode(() => prompt.register(section as never), 'INVALID_CONFIG');
    expect(onChange).not.toHaveBeenCalled();
    expect(prompt.assemble().sections).toEqual([]);
  });

  it('DUPLICATE_SECTION within the global layer and within one agent layer', () => {
    const { system, prompt } = setup();
    prompt.register({ name: 'a', text: 'one' });
    expectCode(() => prompt.register({ name: 'a', text: 'two' }), 'DUPLICATE_SECTION');
    const scope = system.createScope(scopeOptions());
    scope.registry.register({ name: 'b', text: 'one' });
    expectCode(() => scope.registry.register({ name: 'b', text: 'two' }), 'DUPLICATE_SECTION');
    expect(scope.assemble().system).toBe('one\n\none');
  });

  it('the same name in different agent layers is not a duplicate', () => {
    const { system } = setup();
    const s1 = system.createScope(scopeOptions());
    const s2 = system.createScope(scopeOptions());
    s1.registry.register({ name: 'x', text: 'first' });
    s2.registry.register({ name: 'x', text: 'second' });
    expect(s1.assemble().system).toBe('first');
    expect(s2.assemble().system).toBe('second');
  });

  it('copies the section so later mutation has no effect', () => {
    const { prompt } = setup();
    const section = { name: 'a', text: 'original', order: 1 };
    prompt.register(section);
    section.text = 'mutated';
    expect(prompt.assemble().system).toBe('original');
  });
});

describe('shadowing', () => {
  it('a shadow keeps the slot (order and tie position) of the shadowed section', () => {
    const { system, prompt } = setup();
    prompt.register({ name: 'first', text: 'first' });
    prompt.register({ name: 'target', order: 50, text: 'global target' });
    prompt.register({ name: 'tie', order: 50, text: 'tie' });
    const scope = system.createScope(scopeOptions());
    scope.registry.register({ name: 'target', text: 'agent target' });
    expect(scope.assemble().sections).toEqual([
      { name: 'target', text: 'agent target' },
      { name: 'tie', text: 'tie' },
      { name: 'first', text: 'first' },
    ]);
    // The global view is untouched.
    expect(prompt.assemble().sections.map((s) => s.text)).toEqual(['global target', 'tie', 'first']);
  });

  it('a shadow with its own order moves to that order', () => {
    const { system, prompt } = setup();
    prompt.register({ name: 'a', order: 10, text: 'A' });
    prompt.register({ name: 'b', order: 20, text: 'B' });
    prompt.register({ name: 'c', order: 30, text: 'C' });
    const scope = system.createScope(scopeOptions());
    scope.registry.register({ name: 'a', order: 25, text: 'A2' });
    expect(scope.assemble().system).toBe('B\n\nA2\n\nC');
  });

  it('a shadow with its own order still breaks ties at the shadowed registration position', () => {
    const { system, prompt } = setup();
    registerPersona(prompt, 'Global persona');
    prompt.register({ name: 'also_zero', order: 0, text: 'also zero' });
    const scope = system.createScope(scopeOptions());
    registerPersona(scope.registry, 'Agent persona'); // explicit order 0, registered last
    expect(names(scope.assemble())).toEqual([PERSONA_SECTION, 'also_zero']);
    expect(scope.assemble().sections[0]?.text).toBe('Agent persona');
  });

  it('an agent-only section uses its own registration position', () => {
    const { system, prompt } = setup();
    const scope = system.createScope(scopeOptions());
    prompt.register({ name: 'g', text: 'g' });
    scope.registry.register({ name: 'a', text: 'a' });
    prompt.register({ name: 'h', text: 'h' });
    expect(names(scope.assemble())).toEqual(['g', 'a', 'h']);
  });

  it('does not evaluate the shadowed text provider', () => {
    const { system, prompt } = setup();
    const globalText = vi.fn(() => 'global');
    prompt.register({ name: 'x', text: globalText });
    const scope = system.createScope(scopeOptions());
    scope.registry.register({ name: 'x', text: 'agent' });
    expect(scope.assemble().system).toBe('agent');
    expect(globalText).not.toHaveBeenCalled();
  });

  it('does not template the shadowed text either', () => {
    const { system, prompt } = setup();
    prompt.register({ name: 'x', text: '{{broken }}' });
    const scope = system.createScope(scopeOptions());
    scope.registry.register({ name: 'x', text: 'fine' });
    expect(scope.assemble().system).toBe('fine');
  });

  it('shadows for that agent only; siblings see the global section', () => {
    const { system, prompt } = setup();
    registerPersona(prompt, 'Global persona');
    const child = system.createScope(scopeOptions());
    const sibling = system.createScope(scopeOptions());
    registerPersona(child.registry, 'Child persona');
    expect(child.assemble().sections[0]).toEqual({ name: PERSONA_SECTION, text: 'Child persona' });
    expect(sibling.assemble().sections[0]).toEqual({ name: PERSONA_SECTION, text: 'Global persona' });
  });

  it('an empty-string persona shadow yields no persona', () => {
    const { system, prompt } = setup();
    registerPersona(prompt, 'Global persona');
    prompt.register({ name: 'rules', text: 'Rules' });
    const scope = system.createScope(scopeOptions());
    registerPersona(scope.registry, '');
    expect(scope.assemble()).toEqual({ system: 'Rules', sections: [{ name: 'rules', text: 'Rules' }] });
  });

  it('the persona sits at order 0 and is templated', () => {
    const { system, prompt } = setup();
    prompt.register({ name: 'neg', order: -1, text: 'neg' });
    prompt.register({ name: 'body', text: 'body' });
    registerPersona(prompt, 'You are {{agent_id}} on {{provider}}/{{model}} at depth {{depth}}.');
    const scope = system.createScope(scopeOptions());
    expect(scope.assemble().sections).toEqual([
      { name: 'neg', text: 'neg' },
      { name: PERSONA_SECTION, text: 'You are a1 on scripted/echo at depth 1.' },
      { name: 'body', text: 'body' },
    ]);
  });

  it('a malformed persona is a TEMPLATE_ERROR naming deployment:persona', () => {
    const { system } = setup();
    const scope = system.createScope(scopeOptions());
    registerPersona(scope.registry, 'Hi {{ agent_id }}');
    const error = expectCode(() => scope.assemble(), 'TEMPLATE_ERROR');
    expect(error.details).toMatchObject({ section: PERSONA_SECTION });
  });

  it('removing the shadow restores the global section', () => {
    const { system, prompt } = setup();
    prompt.register({ name: 'x', text: 'global' });
    const scope = system.createScope(scopeOptions());
    const dispose = scope.registry.register({ name: 'x', text: 'agent' });
    expect(scope.assemble().system).toBe('agent');
    dispose();
    expect(scope.assemble().system).toBe('global');
  });
});
