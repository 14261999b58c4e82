import { describe, expect, it } from 'vitest';
import {
  anthropicCompatible,
  createModelCatalog,
  openAICompatible,
  resolveChildRoute,
  scriptedModels,
} from '../../../src/models/index.js';
import type { ModelProviderConfig } from '../../../src/models/types.js';
import { expectCode } from '../../support/codes.js';

const scripted = scriptedModels({
  id: 'sc',
  name: 'Scripted',
  models: [
    'plain',
    { id: 'thinker', efforts: ['low', 'high'], defaultEffort: 'low' },
    { id: 'choosy', efforts: ['a', 'b'] },
  ],
});
const open = openAICompatible({
  id: 'oa',
  baseURL: 'http://127.0.0.1:1/v1',
  models: [{ id: 'gpt', efforts: ['low'], defaultEffort: 'low' }],
});
const closed = openAICompatible({
  id: 'closed',
  baseURL: 'http://127.0.0.1:1',
  models: [{ id: 'only' }],
  acceptsUnlistedModels: false,
});
const catalog = createModelCatalog([scripted, open, closed]);

describe('createModelCatalog', () => {
  it('lists providers and models', () => {
    expect(catalog.providers()).toEqual([
      { id: 'sc', name: 'Scripted' },
      { id: 'oa', name: 'oa' },
      { id: 'closed', name: 'closed' },
    ]);
    expect(catalog.models('sc')).toEqual([
      { id: 'plain', efforts: [] },
      { id: 'thinker', efforts: ['low', 'high'], defaultEffort: 'low' },
      { id: 'choosy', efforts: ['a', 'b'] },
    ]);
    expectCode(() => catalog.models('nope'), 'UNKNOWN_MODEL');
    expect(catalog.config('oa')).toEqual(open); // its checked copy
    expect(catalog.config('nope')).toBeUndefined();
  });

  it('resolves happy paths and fills the default effort', () => {
    expect(catalog.resolve({ provider: 'sc', model: 'plain' })).toEqual({ provider: 'sc', model: 'plain' });
    expect('reasoningEffort' in catalog.resolve({ provider: 'sc', model: 'plain' })).toBe(false);
    expect(catalog.resolve({ provider: 'sc', model: 'thinker' })).toEqual({
      provider: 'sc',
      model: 'thinker',
      reasoningEffort: 'low',
    });
    expect(catalog.resolve({ provider: 'sc', model: 'thinker', reasoningEffort: 'high', maxTokens: 100 })).toEqual({
      provider: 'sc',
      model: 'thinker',
      reasoningEffort: 'high',
      maxTokens: 100,
    });
    expect(catalog.resolve({ provider: 'sc', model: 'choosy' })).toEqual({ provider: 'sc', model: 'choosy' });
  });

  it('accepts unlisted models only when the provider says so, with any effort', () => {
    expect(catalog.resolve({ provider: 'oa', model: 'other', reasoningEffort: 'whatever' })).toEqual({
      provider: 'oa',
      model: 'other',
      reasoningEffort: 'whatever',
    });
    expect(catalog.resolve({ provider: 'oa', model: 'other' })).toEqual({ provider: 'oa', model: 'other' });
    expectCode(() => catalog.resolve({ provider: 'closed', model: 'other' }), 'UNKNOWN_MODEL');
    expectCode(() => catalog.resolve({ provider: 'sc', model: 'scripted' }), 'UNKNOWN_MODEL');
  });

  it('rejects incomplete or unknown routes with UNKNOWN_MODEL', () => {
    expectCode(() => catalog.resolve({}), 'UNKNOWN_MODEL');
    expectCode(() => catalog.resolve({ provider: 'sc' }), 'UNKNOWN_MODEL');
    expectCode(() => catalog.resolve({ model: 'plain' }), 'UNKNOWN_MODEL');
    expectCode(() => catalog.resolve({ provider: '', model: 'plain' }), 'UNKNOWN_MODEL');
    expectCode(() => catalog.resolve({ provider: 'zz', model: 'plain' }), 'UNKNOWN_MODEL');
  });

  it('rejects unlisted efforts with INVALID_EFFORT', () => {
    expectCode(() => catalog.resolve({ provider: 'sc', model: 'thinker', reasoningEffort: 'max' }), 'INVALID_EFFORT');
    expectCode(() => catalog.resolve({ provider: 'sc', model: 'plain', reasoningEffort: 'low' }), 'INVALID_EFFORT');
    expectCode(() => catalog.resolve({ provider: 'oa', model: 'gpt', reasoningEffort: 'high' }), 'INVALID_EFFORT');
  });

  it('checks maxTokens is a positive safe integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '10' as unknown as number]) {
      expectCode(() => catalog.resolve({ provider: 'sc', model: 'plain', maxTokens: bad }), 'INVALID_CONFIG');
    }
    expect(catalog.resolve({ provider: 'sc', model: 'plain', maxTokens: 1 }).maxTokens).toBe(1);
  });

  it('rejects duplicate provider ids', () => {
    const twin: ModelProviderConfig = { ...scripted, name: 'twin' };
    expectCode(() => createModelCatalog([scripted, twin]), 'INVALID_CONFIG');
  });

  describe('adapter options of hand-built configs are checked and completed here (adapters take them as given)', () => {
    const handBuilt = (kind: ModelProviderConfig['kind'], options: Record<string, unknown>): ModelProviderConfig => ({
      kind,
      id: 'hand',
      name: 'hand',
      models: [{ id: 'm', efforts: [] }],
      acceptsUnlistedModels: false,
      options,
    });
    const optionsOf = (config: ModelProviderConfig) => createModelCatalog([config]).config('hand')?.options;

    it('scripted', () => {
      expect(optionsOf(handBuilt('scripted', { scripts: [{ match: 'a', turns: [{ text: 'b' }] }] }))).toEqual({
        scripts: [{ match: 'a', turns: [{ text: 'b' }] }],
        fallback: 'echo',
      });
      for (const bad of [
        { scripts: [{ match: 'a', turns: [{ fault: 'boom' }] }] },
        { scripts: 'all' },
        { fallback: 'shrug' },
      ])
        expectCode(() => optionsOf(handBuilt('scripted', bad)), 'INVALID_CONFIG');
    });

    it('openai-compatible', () => {
      expect(optionsOf(handBuilt('openai-compatible', { baseURL: 'http://127.0.0.1:1/v1' }))).toEqual({
        baseURL: 'http://127.0.0.1:1/v1',
        maxTokensField: 'max_tokens',
        retry: open.options.retry,
        request: {},
        perModel: {},
      });
      for (const bad of [{ baseURL: 'not a url' }, { baseURL: 'http://h', request: { temperature: 'hot' } }])
        expectCode(() => optionsOf(handBuilt('openai-compatible', bad)), 'INVALID_CONFIG');
    });

    it('anthropic-compatible', () => {
      const given = anthropicCompatible({ id: 'an', baseURL: 'http://127.0.0.1:1', models: ['claude'] }).options;
      expect(optionsOf(handBuilt('anthropic-compatible', given))).toEqual(given);
      expectCode(
        () => optionsOf(handBuilt('anthropic-compatible', { ...given, anthropicVersion: '' })),
        'INVALID_CONFIG',
      );
    });
  });
});

describe('resolveChildRoute', () => {
  const parent = { provider: 'sc', model: 'thinker', reasoningEffort: 'high', maxTokens: 500 };
  const cases: [string, Parameters<typeof resolveChildRoute>[0], ReturnType<typeof resolveChildRoute>][] = [
    ['nothing explicit inherits everything', undefined, parent],
    ['empty explicit inherits everything', {}, parent],
    ['same model named keeps effort and cap', { model: 'thinker' }, parent],
    ['same provider named keeps effort and cap', { provider: 'sc' }, parent],
    ['effort only', { reasoningEffort: 'low' }, { ...parent, reasoningEffort: 'low' }],
    ['maxTokens only', { maxTokens: 7 }, { ...parent, maxTokens: 7 }],
    ['model change drops effort and cap', { model: 'plain' }, { provider: 'sc', model: 'plain' }],
    ['provider change drops effort and cap', { provider: 'oa', model: 'gpt' }, { provider: 'oa', model: 'gpt' }],
    ['provider-only change drops too', { provider: 'oa' }, { provider: 'oa', model: 'thinker' }],
    [
      'model change keeps explicit effort',
      { model: 'choosy', reasoningEffort: 'a' },
      { provider: 'sc', model: 'choosy', reasoningEffort: 'a' },
    ],
    [
      'model change keeps explicit cap',
      { model: 'plain', maxTokens: 9 },
      { provider: 'sc', model: 'plain', maxTokens: 9 },
    ],
    [
      'undefined fields do not override',
      { model: undefined, reasoningEffort: undefined, maxTokens: undefined },
      parent,
    ],
  ];
  it.each(cases)('%s', (_name, explicit, expected) => {
    const route = resolveChildRoute(explicit, parent);
    expect(route).toEqual(expected);
    expect(Object.keys(route).sort()).toEqual(Object.keys(expected).sort());
  });

  it('the dropped effort becomes the new model default at resolve', () => {
    const route = resolveChildRoute({ model: 'thinker' }, { provider: 'oa', model: 'gpt', reasoningEffort: 'low' });
    expect(route).toEqual({ provider: 'oa', model: 'thinker' });
    expect(() => catalog.resolve(route)).not.toThrow(); // unlisted on oa: accepted
    const switched = resolveChildRoute(
      { provider: 'sc' },
      { provider: 'oa', model: 'thinker', reasoningEffort: 'zzz' },
    );
    expect(catalog.resolve(switched)).toEqual({ provider: 'sc', model: 'thinker', reasoningEffort: 'low' });
  });

  it('does not mutate its inputs', () => {
    const inherited = { ...parent };
    const explicit = { model: 'plain' };
    resolveChildRoute(explicit, inherited);
    expect(inherited).toEqual(parent);
    expect(explicit).toEqual({ model: 'plain' });
  });
});

describe('config factories', () => {
  it('scriptedModels normalises and defaults', () => {
    const config = scriptedModels({ id: 'x' });
    expect(config).toMatchObject({
      kind: 'scripted',
      id: 'x',
      name: 'x',
      acceptsUnlistedModels: false,
      models: [{ id: 'scripted', efforts: [] }],
    });
    expect(config.options).toEqual({ scripts: [], fallback: 'echo' });
    expect(structuredClone(config)).toEqual(config);
  });

  it('scriptedModels rejects bad options naming the key', () => {
    const bad: [unknown, string][] = [
      [{}, 'id'],
      [{ id: 'x', fallback: 'loud' }, 'fallback'],
      [{ id: 'x', scripts: [{ match: 'a', turns: [{ fault: 'boom' }] }] }, 'scripts.0.turns.0'],
      [{ id: 'x', scripts: [{ match: 'a', turns: [], latencyMs: -1 }] }, 'scripts.0.latencyMs'],
      [{ id: 'x', models: [{ id: 'm', efforts: ['a'], defaultEffort: 'b' }] }, 'models.0'],
      [{ id: 'x', colour: 'red' }, 'colour'],
    ];
    for (const [options, key] of bad) {
      let thrown: unknown;
      try {
        scriptedModels(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'INVALID_CONFIG' });
      expect(String((thrown as Error).message)).toContain(key);
    }
  });

  it('openAICompatible defaults and validation', () => {
    expect(open).toMatchObject({
      kind: 'openai-compatible',
      acceptsUnlistedModels: true,
      options: { baseURL: 'http://127.0.0.1:1/v1', maxTokensField: 'max_tokens' },
    });
    expectCode(() => openAICompatible({ id: 'x', baseURL: 'not a url', models: [] }), 'INVALID_CONFIG');
    expectCode(
      () => openAICompatible({ id: 'x', baseURL: 'http://h', models: [], maxTokensField: 'cap' as never }),
      'INVALID_CONFIG',
    );
    expectCode(() => openAICompatible({ id: 'x', baseURL: 'http://h' } as never), 'INVALID_CONFIG');
  });
});
