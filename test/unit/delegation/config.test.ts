/** SPEC §11 config: strict zod validation, every error naming its key, defaults, no materialization. */
import { describe, expect, it } from 'vitest';
import { parseSubagentToolConfig } from '../../../src/delegation/config.js';
import { BroodError } from '../../../src/errors.js';

function configError(input: unknown): BroodError {
  try {
    parseSubagentToolConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(BroodError);
    return error as BroodError;
  }
  throw new Error(`expected INVALID_CONFIG for ${JSON.stringify(input)}`);
}

describe('subagentTool config', () => {
  it('applies every default and keeps omitted controls absent', () => {
    const config = parseSubagentToolConfig({ provider: 'spawn' });
    expect(config).toEqual({
      provider: 'spawn',
      toolName: 'subagent',
      enableModelSelection: false,
      modelSelectionSettings: false,
      enableRunInBackground: true,
      backgroundMode: 'one-shot',
      maxDepth: 3,
    });
    expect('toolFilter' in config).toBe(false);
    expect('agentOptions' in config).toBe(false);
    expect('persona' in config).toBe(false);
  });

  it('keeps given values, copies arrays, and accepts maxDepth 0 and provider-managed', () => {
    const allow = ['read'];
    const config = parseSubagentToolConfig({
      provider: 'fork',
      toolName: 'subagent_fork',
      backgroundMode: 'continuable',
      maxDepth: 0,
      toolFilter: { allow },
      agentOptions: { provider: 'p', model: 'm', maxTokens: 5 },
      persona: '',
    });
    allow.push('write');
    expect(config.toolFilter).toEqual({ allow: ['read'] });
    expect(config.toolFilter).not.toHaveProperty('deny');
    expect(config.agentOptions).toEqual({ provider: 'p', model: 'm', maxTokens: 5 });
    expect(config.persona).toBe('');
    expect(config.maxDepth).toBe(0);
    expect(parseSubagentToolConfig({ provider: 'acp', maxDepth: 'provider-managed' }).maxDepth).toBe(
      'provider-managed',
    );
    expect(parseSubagentToolConfig({ provider: 'x', toolFilter: { deny: [] } }).toolFilter).toEqual({ deny: [] });
    expect(parseSubagentToolConfig({ provider: 'x', toolFilter: { allow: [] } }).toolFilter).toEqual({ allow: [] });
  });

  const cases: [string, unknown, RegExp][] = [
    ['missing provider', {}, /provider/],
    ['empty provider', { provider: '' }, /provider/],
    ['toolFilter with neither list', { provider: 'spawn', toolFilter: {} }, /toolFilter/],
    ['toolFilter unknown key', { provider: 'spawn', toolFilter: { allow: [], only: [] } }, /toolFilter/],
    ['maxDepth string', { provider: 'spawn', maxDepth: '3' }, /maxDepth/],
    ['maxDepth NaN', { provider: 'spawn', maxDepth: Number.NaN }, /maxDepth/],
    ['maxDepth Infinity', { provider: 'spawn', maxDepth: Number.POSITIVE_INFINITY }, /maxDepth/],
    ['maxDepth -Infinity', { provider: 'spawn', maxDepth: Number.NEGATIVE_INFINITY }, /maxDepth/],
    ['maxDepth negative', { provider: 'spawn', maxDepth: -1 }, /maxDepth/],
    ['maxDepth fraction', { provider: 'spawn', maxDepth: 1.5 }, /maxDepth/],
    ['maxDepth -0', { provider: 'spawn', maxDepth: -0 }, /maxDepth/],
    ['maxDepth unsafe', { provider: 'spawn', maxDepth: 2 ** 53 }, /maxDepth/],
    ['maxDepth null', { provider: 'spawn', maxDepth: null }, /maxDepth/],
    [
      'both model-selection switches',
      { provider: 'spawn', enableModelSelection: true, modelSelectionSettings: true },
      /enableModelSelection.*modelSelectionSettings/,
    ],
    ['unknown key', { provider: 'spawn', tool_name: 'x' }, /tool_name/],
    ['toolName with a space', { provider: 'spawn', toolName: 'sub agent' }, /toolName/],
    ['toolName empty', { provider: 'spawn', toolName: '' }, /toolName/],
    ['toolName too long', { provider: 'spawn', toolName: 'a'.repeat(65) }, /toolName/],
    ['agentOptions.maxTokens zero', { provider: 'spawn', agentOptions: { maxTokens: 0 } }, /agentOptions\.maxTokens/],
    [
      'agentOptions.maxTokens fraction',
      { provider: 'spawn', agentOptions: { maxTokens: 1.5 } },
      /agentOptions\.maxTokens/,
    ],
    [
      'agentOptions.maxTokens unsafe',
      { provider: 'spawn', agentOptions: { maxTokens: 2 ** 53 } },
      /agentOptions\.maxTokens/,
    ],
    [
      'agentOptions.maxTokens string',
      { provider: 'spawn', agentOptions: { maxTokens: '5' } },
      /agentOptions\.maxTokens/,
    ],
    ['agentOptions unknown key', { provider: 'spawn', agentOptions: { effort: 'high' } }, /effort/],
    ['backgroundMode unknown', { provider: 'spawn', backgroundMode: 'detached' }, /backgroundMode/],
    ['enableRunInBackground not boolean', { provider: 'spawn', enableRunInBackground: 'yes' }, /enableRunInBackground/],
    ['persona not a string', { provider: 'spawn', persona: 3 }, /persona/],
    [
      'reportDelivery unknown',
      { provider: 'spawn', backgroundMode: 'continuable', reportDelivery: 'later' },
      /reportDelivery/,
    ],
    ['reportDelivery on a one-shot instance', { provider: 'spawn', reportDelivery: 'quiet' }, /reportDelivery/],
  ];

  it.each(cases)('rejects %s with INVALID_CONFIG naming the key', (_label, input, key) => {
    const error = configError(input);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toMatch(key);
  });

  it('rejects a non-object config', () => {
    expect(configError('spawn').code).toBe('INVALID_CONFIG');
    expect(configError(null).code).toBe('INVALID_CONFIG');
  });

  it("keeps a continuable instance's reportDelivery (absent by default: the runtime default applies)", () => {
    const quiet = parseSubagentToolConfig({
      provider: 'spawn',
      backgroundMode: 'continuable',
      reportDelivery: 'quiet',
    });
    expect(quiet.reportDelivery).toBe('quiet');
    expect('reportDelivery' in parseSubagentToolConfig({ provider: 'spawn', backgroundMode: 'continuable' })).toBe(
      false,
    );
  });

  it('accepts every valid toolName shape', () => {
    for (const toolName of ['a', 'subagent_fork', 'Sub-Agent-2', 'x'.repeat(64)]) {
      expect(parseSubagentToolConfig({ provider: 'spawn', toolName }).toolName).toBe(toolName);
    }
  });
});
