/** The prompt system's tool-bound sections, variables, and disposers and change notifications. */
import { describe, expect, it, vi } from 'vitest';
import { BUILTIN_VARIABLES } from '../../../src/prompt/index.js';
import type { Agent } from '../../../src/types.js';
import { expectCode } from '../../support/codes.js';
import { scopeOptions, setup, toolView } from './helpers.js';

describe('tool-bound sections', () => {
  it('render only where the tool is in the scope view', () => {
    const { system, prompt } = setup(['read', 'write']);
    prompt.register({ name: 'tool:read', tool: 'read', text: 'Use read.' });
    prompt.register({ name: 'always', text: 'Always.' });
    let visible = ['read'];
    const scope = system.createScope(scopeOptions({ tools: () => toolView(visible) }));
    expect(scope.assemble().system).toBe('Use read.\n\nAlways.');
    visible = [];
    expect(scope.assemble().system).toBe('Always.');
    // Global assembly follows the global tool view.
    expect(prompt.assemble().system).toBe('Use read.\n\nAlways.');
  });

  it('do not evaluate their provider when the tool is hidden', () => {
    const { system, prompt } = setup();
    const text = vi.fn(() => '{{ would_fail }}');
    prompt.register({ name: 'guide', tool: 'hidden', text });
    const scope = system.createScope(scopeOptions());
    expect(scope.assemble().system).toBe('');
    expect(text).not.toHaveBeenCalled();
  });

  it('sections without tool are unaffected by tool filters, whatever their name', () => {
    const { system, prompt } = setup();
    prompt.register({ name: 'tool:read', text: 'looks tool-ish' });
    prompt.register({ name: 'read', text: 'named like a tool' });
    const scope = system.createScope(scopeOptions({ tools: () => toolView([]) }));
    expect(scope.assemble().system).toBe('looks tool-ish\n\nnamed like a tool');
  });
});

describe('variables', () => {
  it('exports the four built-ins', () => {
    expect([...BUILTIN_VARIABLES]).toEqual(['agent_id', 'depth', 'provider', 'model']);
  });

  it('substitutes registered variables, with agent-layer variables shadowing global ones', () => {
    const { system, prompt } = setup();
    prompt.variable('team', () => 'global team');
    prompt.register({ name: 's', text: 'Team: {{team}}' });
    const scope = system.createScope(scopeOptions());
    const other = system.createScope(scopeOptions());
    scope.registry.variable('team', () => 'agent team');
    expect(scope.assemble().system).toBe('Team: agent team');
    expect(other.assemble().system).toBe('Team: global team');
    expect(prompt.assemble().system).toBe('Team: global team');
  });

  it('passes the context to variable providers and only calls referenced ones', () => {
    const agent = { id: 'z' } as Agent;
    const { system, prompt } = setup();
    const used = vi.fn((ctx: { agent: Agent | undefined }) => ctx.agent?.id);
    const unused = vi.fn(() => 'never');
    prompt.variable('who', used);
    prompt.variable('other', unused);
    prompt.register({ name: 's', text: '{{who}}' });
    const scope = system.createScope(scopeOptions({ agent: () => agent }));
    expect(scope.assemble().system).toBe('z');
    expect(unused).not.toHaveBeenCalled();
  });

  it('invalid names are TEMPLATE_ERROR', () => {
    const { prompt } = setup();
    for (const name of ['', 'Bad', '1x', 'a-b', 'a b', '_x']) {
      expectCode(() => prompt.variable(name, () => 'v'), 'TEMPLATE_ERROR');
    }
  });

  it('duplicates in one layer and built-in names are DUPLICATE_VARIABLE', () => {
    const { system, prompt } = setup();
    prompt.variable('x', () => '1');
    expectCode(() => prompt.variable('x', () => '2'), 'DUPLICATE_VARIABLE');
    const scope = system.createScope(scopeOptions());
    scope.registry.variable('y', () => '1');
    expectCode(() => scope.registry.variable('y', () => '2'), 'DUPLICATE_VARIABLE');
    for (const name of BUILTIN_VARIABLES) {
      expectCode(() => prompt.variable(name, () => 'v'), 'DUPLICATE_VARIABLE');
      expectCode(() => scope.registry.variable(name, () => 'v'), 'DUPLICATE_VARIABLE');
    }
  });

  it('a non-function value is INVALID_CONFIG', () => {
    expectCode(() => setup().prompt.variable('x', 'v' as never), 'INVALID_CONFIG');
  });

  it('a variable returning undefined is TEMPLATE_ERROR listing known variables', () => {
    const { system, prompt } = setup();
    prompt.variable('maybe', () => undefined);
    prompt.register({ name: 'uses', text: 'value: {{maybe}}' });
    const error = expectCode(() => system.createScope(scopeOptions()).assemble(), 'TEMPLATE_ERROR');
    expect(error.details).toMatchObject({ section: 'uses', variable: 'maybe' });
    expect(error.details?.knownVariables).toEqual(['agent_id', 'depth', 'maybe', 'model', 'provider']);
  });

  it('an unknown variable is TEMPLATE_ERROR; a removed variable becomes unknown', () => {
    const { system, prompt } = setup();
    const dispose = prompt.variable('v', () => 'ok');
    prompt.register({ name: 'uses', text: '{{v}}' });
    const scope = system.createScope(scopeOptions());
    expect(scope.assemble().system).toBe('ok');
    dispose();
    const error = expectCode(() => scope.assemble(), 'TEMPLATE_ERROR');
    expect(error.details).toMatchObject({ section: 'uses', variable: 'v' });
  });

  it('a built-in with no value in this scope is TEMPLATE_ERROR', () => {
    const { system } = setup();
    const scope = system.createScope(scopeOptions({ builtins: () => ({ agent_id: 'a1' }) }));
    scope.registry.register({ name: 's', text: '{{depth}}' });
    expectCode(() => scope.assemble(), 'TEMPLATE_ERROR');
  });

  it('a throwing variable is TEMPLATE_ERROR with the cause kept', () => {
    const { prompt } = setup();
    const boom = new Error('nope');
    prompt.variable('v', () => {
      throw boom;
    });
    prompt.register({ name: 's', text: '{{v}}' });
    const error = expectCode(() => prompt.assemble(), 'TEMPLATE_ERROR');
    expect(error.details).toMatchObject({ section: 's', variable: 'v' });
    expect(error.cause).toBe(boom);
  });

  it('variable values are not re-scanned', () => {
    const { prompt } = setup();
    prompt.variable('v', () => '{{v}} and {{ not_a_ref }}');
    prompt.register({ name: 's', text: '<{{v}}>' });
    expect(prompt.assemble().system).toBe('<{{v}} and {{ not_a_ref }}>');
  });
});

describe('disposers and change notifications', () => {
  it('section disposers are idempotent, usable with using, and only remove their own entry', () => {
    const { prompt } = setup();
    const first = prompt.register({ name: 'a', text: 'first' });
    first();
    const second = prompt.register({ name: 'a', text: 'second' });
    first();
    expect(prompt.assemble().system).toBe('second');
    {
      using _ = prompt.register({ name: 'b', text: 'scoped' });
      expect(prompt.assemble().system).toBe('second\n\nscoped');
    }
    expect(prompt.assemble().system).toBe('second');
    second();
    second[Symbol.dispose]();
    expect(prompt.assemble().system).toBe('');
  });

  it('variable disposers are idempotent and allow re-registration', () => {
    const { prompt } = setup();
    const dispose = prompt.variable('v', () => '1');
    dispose();
    dispose();
    prompt.variable('v', () => '2');
    prompt.register({ name: 's', text: '{{v}}' });
    expect(prompt.assemble().system).toBe('2');
  });

  it('the system onChange fires for global-layer changes, a scope onChange for its own layer', () => {
    const { system, prompt, onChange } = setup();
    const scopeChange = vi.fn();
    const scope = system.createScope({ ...scopeOptions(), onChange: scopeChange });
    expect(onChange).toHaveBeenCalledTimes(0);
    const d1 = prompt.register({ name: 'a', text: 'a' });
    const d2 = prompt.variable('v', () => 'v');
    const d3 = scope.registry.register({ name: 'b', text: 'b' });
    const d4 = scope.registry.variable('w', () => 'w');
    expect(onChange).toHaveBeenCalledTimes(2);
    expect(scopeChange).toHaveBeenCalledTimes(2);
    for (const dispose of [d1, d2, d3, d4]) {
      dispose();
      dispose();
    }
    expect(onChange).toHaveBeenCalledTimes(4);
    expect(scopeChange).toHaveBeenCalledTimes(4);
  });

  it('onChange does not fire for rejected registrations', () => {
    const { prompt, onChange } = setup();
    prompt.register({ name: 'a', text: 'a' });
    expectCode(() => prompt.register({ name: 'a', text: 'a' }), 'DUPLICATE_SECTION');
    expectCode(() => prompt.variable('Bad', () => 'x'), 'TEMPLATE_ERROR');
    expect(onChange).toHaveBeenCalledTimes(1);
  });

  it('scope dispose drops the agent layer, notifies once, then rejects with DISPOSED', () => {
    const { system, prompt, onChange } = setup();
    prompt.register({ name: 'g', text: 'global' });
    const scopeChange = vi.fn();
    const scope = system.createScope({ ...scopeOptions(), onChange: scopeChange });
    const dispose = scope.registry.register({ name: 'a', text: 'agent' });
    onChange.mockClear();
    scopeChange.mockClear();
    scope.dispose();
    scope.dispose();
    expect(scopeChange).toHaveBeenCalledTimes(1);
    dispose(); // stale disposer after scope disposal is a harmless no-op
    expect(scopeChange).toHaveBeenCalledTimes(1);
    expect(onChange).toHaveBeenCalledTimes(0);
    expectCode(() => scope.registry.register({ name: 'b', text: 'b' }), 'DISPOSED');
    expectCode(() => scope.registry.variable('x', () => 'x'), 'DISPOSED');
    expectCode(() => scope.assemble(), 'DISPOSED');
    expect(prompt.assemble().system).toBe('global');
  });

  it('two prompt systems share no state', () => {
    const one = setup();
    const two = setup();
    one.prompt.register({ name: 'a', text: 'one' });
    two.prompt.register({ name: 'a', text: 'two' });
    expect(one.prompt.assemble().system).toBe('one');
    expect(two.prompt.assemble().system).toBe('two');
    expect(two.onChange).toHaveBeenCalledTimes(1);
  });

  it('registry methods work unbound', () => {
    const { prompt } = setup();
    const { register, variable, assemble } = prompt;
    variable('v', () => 'ok');
    register({ name: 's', text: '{{v}}' });
    expect(assemble().system).toBe('ok');
  });
});
