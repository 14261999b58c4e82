/** SPEC §11.2–§11.4, §11.9: argument checks, routes, and the start request built from the config. */
import { describe, expect, it } from 'vitest';
import { buildRequest, childAgentOptions, parseCall } from '../../../src/delegation/call.js';
import { parseSubagentToolConfig } from '../../../src/delegation/config.js';
import type { Agent } from '../../../src/types.js';

const config = (extra: Record<string, unknown> = {}) => parseSubagentToolConfig({ provider: 'spawn', ...extra });
const base = { description: 'find bug', prompt: 'look for the bug' };

function argsError(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('parseCall', () => {
  it('routes: omitted → foreground in one-shot, background in continuable; explicit false → foreground', () => {
    expect(parseCall(config(), base, false).background).toBe(false);
    expect(parseCall(config(), { ...base, run_in_background: true }, false).background).toBe(true);
    expect(parseCall(config({ backgroundMode: 'continuable' }), base, false).background).toBe(true);
    expect(
      parseCall(config({ backgroundMode: 'continuable' }), { ...base, run_in_background: false }, false).background,
    ).toBe(false);
  });

  it('background disabled: forced true is an INVALID_ARGS rejection with the SPEC text, false is the foreground', () => {
    const off = config({ enableRunInBackground: false });
    const error = argsError(() => parseCall(off, { ...base, run_in_background: true }, false));
    expect(error).toMatchObject({
      code: 'INVALID_ARGS',
      message: 'run_in_background is disabled for this tool instance',
    });
    expect(parseCall(off, { ...base, run_in_background: false }, false).background).toBe(false);
    expect(
      parseCall(config({ enableRunInBackground: false, backgroundMode: 'continuable' }), base, false).background,
    ).toBe(false);
  });

  it('requires a non-empty description and a prompt', () => {
    expect(argsError(() => parseCall(config(), { prompt: 'x' }, false)).code).toBe('INVALID_ARGS');
    expect(argsError(() => parseCall(config(), { description: '', prompt: 'x' }, false)).code).toBe('INVALID_ARGS');
    expect(argsError(() => parseCall(config(), { description: 'd' }, false)).code).toBe('INVALID_ARGS');
    expect(parseCall(config(), { description: 'one', prompt: '' }, false).prompt).toBe('');
  });

  it('rejects forced selection fields where selection is disabled', () => {
    for (const field of ['provider', 'model', 'reasoning_effort']) {
      const error = argsError(() => parseCall(config(), { ...base, [field]: 'x' }, false));
      expect(error.code).toBe('INVALID_ARGS');
      expect(error.message).toContain(field);
    }
  });

  it('selection: both provider and model, or only reasoning_effort, or nothing', () => {
    expect(parseCall(config(), { ...base, provider: 'p', model: 'm' }, true).selection).toEqual({
      provider: 'p',
      model: 'm',
    });
    expect(parseCall(config(), { ...base, reasoning_effort: 'low' }, true).selection).toEqual({
      reasoningEffort: 'low',
    });
    expect(parseCall(config(), base, true).selection).toBeUndefined();
    expect(argsError(() => parseCall(config(), { ...base, provider: 'p' }, true)).code).toBe('INVALID_ARGS');
    expect(argsError(() => parseCall(config(), { ...base, model: 'm', reasoning_effort: 'low' }, true)).code).toBe(
      'INVALID_ARGS',
    );
  });
});

describe('childAgentOptions', () => {
  const configured = { provider: 'a', model: 'a1', reasoningEffort: 'high', maxTokens: 100 };
  it('no selection: the configured defaults (or nothing)', () => {
    expect(childAgentOptions(undefined, undefined)).toBeUndefined();
    expect(childAgentOptions(configured, undefined)).toEqual(configured);
  });
  it('a new route drops the configured effort but keeps maxTokens', () => {
    expect(childAgentOptions(configured, { provider: 'b', model: 'b1' })).toEqual({
      provider: 'b',
      model: 'b1',
      maxTokens: 100,
    });
    expect(childAgentOptions(configured, { provider: 'b', model: 'b1', reasoningEffort: 'low' })).toEqual({
      provider: 'b',
      model: 'b1',
      reasoningEffort: 'low',
      maxTokens: 100,
    });
    expect(childAgentOptions(configured, { provider: 'a', model: 'a1' })).toEqual(configured);
    expect(childAgentOptions(undefined, { provider: 'b', model: 'b1' })).toEqual({ provider: 'b', model: 'b1' });
  });
  it('effort only: overrides the configured effort on the configured route', () => {
    expect(childAgentOptions(configured, { reasoningEffort: 'low' })).toEqual({
      ...configured,
      reasoningEffort: 'low',
    });
    expect(childAgentOptions(undefined, { reasoningEffort: 'low' })).toEqual({ reasoningEffort: 'low' });
  });
});

describe('buildRequest', () => {
  const parent = { id: 'p' } as Agent;
  it('copies persona, toolFilter, numeric maxDepth and agentOptions; omits what is not configured', () => {
    const request = buildRequest(config(), parent, { ...base, selection: undefined });
    expect(request).toEqual({ parent, prompt: base.prompt, label: base.description, maxDepth: 3 });
    const full = config({ persona: '', toolFilter: { deny: ['x'] }, agentOptions: { maxTokens: 9 }, maxDepth: 0 });
    expect(buildRequest(full, parent, { ...base, selection: undefined })).toEqual({
      parent,
      prompt: base.prompt,
      label: base.description,
      persona: '',
      toolFilter: { deny: ['x'] },
      maxDepth: 0,
      agentOptions: { maxTokens: 9 },
    });
  });
  it("'provider-managed' sends no cap, and each request gets its own filter copy", () => {
    const managed = config({ maxDepth: 'provider-managed', toolFilter: { allow: ['a'] } });
    const one = buildRequest(managed, parent, { ...base, selection: undefined });
    const two = buildRequest(managed, parent, { ...base, selection: undefined });
    expect(one).not.toHaveProperty('maxDepth');
    expect(one.toolFilter).not.toBe(two.toolFilter);
    one.toolFilter?.allow?.push('b');
    expect(managed.toolFilter).toEqual({ allow: ['a'] });
  });
});
