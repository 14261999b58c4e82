/** openAICompatible over real loopback HTTP: the request body and the adapter's options. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createModelCatalog,
  loadAdapter,
  type OpenAICompatibleOptions,
  openAICompatible,
} from '../../../src/models/index.js';
import type { ModelProviderConfig } from '../../../src/models/types.js';
import { broodVersion } from '../../../src/version.js';
import { expectCode } from '../../support/codes.js';
import { assistant, makeRequest, tool, user } from './helpers.js';
import { type Loopback, sseFrames, startLoopback } from './loopback.js';
import { adapterOn, DONE, delta } from './openai-fixtures.js';

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(() => server.reset());

const adapter = (extra?: Parameters<typeof adapterOn>[1]) => adapterOn(server, extra);

describe('request body and options', () => {
  it('sends the documented body and headers', async () => {
    server.push(
      sseFrames([delta({ content: 'ok' }, 'stop'), DONE]),
      sseFrames([delta({ content: 'ok' }, 'stop'), DONE]),
    );
    const messages = [
      user('q'),
      assistant('', [
        { callId: 'c1', name: 'search', arguments: '{"q":1}' },
        { callId: 'c2', name: 'read', arguments: 'raw' },
      ]),
      tool('c1', 'r1', 'search'),
      tool('c2', 'r2', 'read'),
      assistant('thinking', [{ callId: 'c3', name: 'search', arguments: '{}' }]),
      tool('c3', 'r3', 'search'),
      assistant('done'),
      user('again'),
    ];
    const tools = [{ name: 'search', description: 'find', parameters: { type: 'object', properties: {} } }];
    const route = { provider: 'oa', model: 'gpt-x', reasoningEffort: 'high', maxTokens: 77 };
    await (await adapter({ apiKey: 'sk-direct' })).request(makeRequest(messages, { system: 'be brief', tools, route }));
    expect(server.seen[0]!.body).toEqual({
      model: 'gpt-x',
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'high',
      max_tokens: 77,
      tools: [
        {
          type: 'function',
          function: { name: 'search', description: 'find', parameters: { type: 'object', properties: {} } },
        },
      ],
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":1}' } },
            { id: 'c2', type: 'function', function: { name: 'read', arguments: 'raw' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'r1' },
        { role: 'tool', tool_call_id: 'c2', content: 'r2' },
        {
          role: 'assistant',
          content: 'thinking',
          tool_calls: [{ id: 'c3', type: 'function', function: { name: 'search', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c3', content: 'r3' },
        { role: 'assistant', content: 'done' },
        { role: 'user', content: 'again' },
      ],
    });
    const headers = server.seen[0]!.headers;
    expect(headers.authorization).toBe('Bearer sk-direct');
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe(`brood/${broodVersion()}`);
    expect(broodVersion()).toMatch(/^\d+\.\d+\.\d+/);

    await (await adapter({ maxTokensField: 'max_completion_tokens' })).request(
      makeRequest([user('q')], { route: { provider: 'oa', model: 'gpt', maxTokens: 5 } }),
    );
    const second = server.seen[1]!.body;
    expect(second.max_completion_tokens).toBe(5);
    for (const key of ['max_tokens', 'tools', 'reasoning_effort', 'tool_choice', 'parallel_tool_calls', 'temperature'])
      expect(key in second).toBe(false);
    expect(second.messages).toEqual([{ role: 'user', content: 'q' }]);
    expect(server.seen[1]!.headers.authorization).toBeUndefined();
  });

  it('passes request options through exactly, per-model keys over provider keys, extraBody last', async () => {
    const responseFormat = { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' } } };
    const a = await adapter({
      temperature: 0.2,
      topP: 0.9,
      seed: 7,
      stop: ['END'],
      toolChoice: 'required',
      parallelToolCalls: false,
      responseFormat,
      headers: { 'OpenAI-Organization': 'org-1', 'x-gateway-key': 'gw' },
      extraBody: { top_k: 40, temperature: 0.3 },
      models: [
        'gpt',
        {
          id: 'pinned',
          temperature: 1.1,
          toolChoice: { name: 'search' },
          headers: { 'x-gateway-key': 'gw-pinned' },
          extraBody: { min_p: 0.1 },
        },
      ],
    });
    const tools = [{ name: 'search', description: 'find', parameters: { type: 'object' } }];
    server.push(
      sseFrames([delta({}, 'stop'), DONE]),
      sseFrames([delta({}, 'stop'), DONE]),
      sseFrames([delta({}, 'stop'), DONE]),
    );
    await a.request(makeRequest([user('q')], { tools, route: { provider: 'oa', model: 'gpt' } }));
    await a.request(makeRequest([user('q')], { tools, route: { provider: 'oa', model: 'pinned' } }));
    await a.request(makeRequest([user('q')], { route: { provider: 'oa', model: 'gpt' } }));
    expect(server.seen[0]!.body).toMatchObject({
      temperature: 0.3,
      top_p: 0.9,
      seed: 7,
      stop: ['END'],
      tool_choice: 'required',
      parallel_tool_calls: false,
      response_format: responseFormat,
      top_k: 40,
    });
    expect(server.seen[0]!.headers).toMatchObject({ 'openai-organization': 'org-1', 'x-gateway-key': 'gw' });
    expect(server.seen[1]!.body).toMatchObject({
      temperature: 0.3,
      tool_choice: { type: 'function', function: { name: 'search' } },
      top_k: 40,
      min_p: 0.1,
      seed: 7,
    });
    expect(server.seen[1]!.headers).toMatchObject({ 'openai-organization': 'org-1', 'x-gateway-key': 'gw-pinned' });
    // Without tools, tool_choice and parallel_tool_calls are not sent (OpenAI refuses them).
    expect('tool_choice' in server.seen[2]!.body).toBe(false);
    expect('parallel_tool_calls' in server.seen[2]!.body).toBe(false);
  });

  it("applies the catalog model's maxTokens unless the route sets its own", async () => {
    const a = await adapter({ models: [{ id: 'capped', maxTokens: 321 }] });
    server.push(sseFrames([delta({}, 'stop'), DONE]), sseFrames([delta({}, 'stop'), DONE]));
    await a.request(makeRequest([user('q')], { route: { provider: 'oa', model: 'capped' } }));
    await a.request(makeRequest([user('q')], { route: { provider: 'oa', model: 'capped', maxTokens: 12 } }));
    expect(server.seen.map((s) => s.body.max_tokens)).toEqual([321, 12]);
  });

  it('reads the key from apiKeyEnv at request time; a configured authorization header wins', async () => {
    const name = 'BROOD_TEST_OPENAI_KEY';
    process.env[name] = 'sk-env';
    try {
      server.push(sseFrames([delta({}, 'stop'), DONE]), sseFrames([delta({}, 'stop'), DONE]));
      await (await adapter({ apiKeyEnv: name })).request(makeRequest([user('q')]));
      await (await adapter({ apiKeyEnv: name, headers: { Authorization: 'Basic abc' } })).request(
        makeRequest([user('q')]),
      );
      expect(server.seen.map((s) => s.headers.authorization)).toEqual(['Bearer sk-env', 'Basic abc']);
    } finally {
      delete process.env[name];
    }
  });

  it('accepts plain string model ids and rejects bad options with INVALID_CONFIG naming the key', () => {
    const config = openAICompatible({
      id: 'oa',
      baseURL: 'http://x/v1',
      models: ['gpt-4o', { id: 'o3', efforts: ['low'] }],
    });
    expect(config.models).toEqual([
      { id: 'gpt-4o', efforts: [] },
      { id: 'o3', efforts: ['low'] },
    ]);
    const bad = (extra: Record<string, unknown>) => () =>
      openAICompatible({ id: 'oa', baseURL: 'http://x/v1', models: [], ...extra } as OpenAICompatibleOptions);
    expectCode(bad({ temperature: 'hot' }), 'INVALID_CONFIG');
    expectCode(bad({ toolChoice: 'always' }), 'INVALID_CONFIG');
    expectCode(bad({ headers: { 'bad header': 'x' } }), 'INVALID_CONFIG');
    expectCode(bad({ retry: { retries: -1 } }), 'INVALID_CONFIG');
    expectCode(bad({ retry: { backoff: 1 } }), 'INVALID_CONFIG');
    expectCode(bad({ models: [''] }), 'INVALID_CONFIG');
    expectCode(bad({ models: [{ id: 'm', temprature: 1 }] }), 'INVALID_CONFIG');
    expectCode(bad({ stream: 'yes' }), 'INVALID_CONFIG');
    try {
      openAICompatible({ id: 'oa', baseURL: 'http://x/v1', models: [{ id: 'm', seed: 1.5 }] });
    } catch (error) {
      expect((error as Error).message).toContain("'models.0.seed'");
    }
  });

  it('keeps working with a config built before these options existed (the catalog fills in the defaults)', async () => {
    const legacy = {
      kind: 'openai-compatible' as const,
      id: 'old',
      name: 'old',
      models: [],
      acceptsUnlistedModels: true,
      options: { baseURL: `${server.base}/v1`, maxTokensField: 'max_tokens' },
    };
    server.push(sseFrames([delta({ content: 'fine' }, 'stop'), DONE]));
    const checked = createModelCatalog([legacy]).config('old') as ModelProviderConfig;
    expect((await (await loadAdapter(checked)).request(makeRequest([user('q')]))).text).toBe('fine');
  });
});
