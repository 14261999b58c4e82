/** moduleAdapter() validation, and examples/openai-sdk-adapter.mjs (the official `openai` client) against a loopback server. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadAdapter, type ModuleAdapterOptions, moduleAdapter } from '../../../src/models/index.js';
import type { ModelAdapter } from '../../../src/models/types.js';
import { expectCode } from '../../support/codes.js';
import { assertBuilt } from '../../support/run-cli.js';
import { makeRequest, user } from './helpers.js';
import { holdOpen, type Loopback, sseFrames, startLoopback, status } from './loopback.js';

const example = new URL('../../../examples/openai-sdk-adapter.mjs', import.meta.url);

describe('moduleAdapter()', () => {
  it('builds the documented provider config (URL objects become hrefs; plain string model ids)', () => {
    const config = moduleAdapter({
      id: 'mine',
      models: ['a', { id: 'b', efforts: ['low'], defaultEffort: 'low', maxTokens: 9 }],
      options: { region: 'eu' },
      moduleUrl: example,
    });
    expect(config).toEqual({
      kind: 'module',
      id: 'mine',
      name: 'mine',
      models: [
        { id: 'a', efforts: [] },
        { id: 'b', efforts: ['low'], defaultEffort: 'low', maxTokens: 9 },
      ],
      acceptsUnlistedModels: false,
      options: { region: 'eu' },
      moduleUrl: example.href,
    });
  });

  it('rejects bad input with INVALID_CONFIG', () => {
    const base: ModuleAdapterOptions = { id: 'm', models: [], moduleUrl: example.href };
    const bad = (extra: Record<string, unknown>) => () => moduleAdapter({ ...base, ...extra } as ModuleAdapterOptions);
    expectCode(bad({ moduleUrl: './relative.mjs' }), 'INVALID_CONFIG');
    expectCode(bad({ moduleUrl: undefined }), 'INVALID_CONFIG');
    expectCode(bad({ options: { fn: () => 1 } }), 'INVALID_CONFIG');
    expectCode(bad({ kind: 'module' }), 'INVALID_CONFIG');
    expectCode(bad({ models: [{ id: 'x', defaultEffort: 'high' }] }), 'INVALID_CONFIG');
    expect(bad({})).not.toThrow();
  });
});

describe('examples/openai-sdk-adapter.mjs', () => {
  let server: Loopback;
  let adapter: ModelAdapter;
  beforeAll(async () => {
    assertBuilt(); // the example imports the built package by name
    server = await startLoopback();
    adapter = await loadAdapter(
      moduleAdapter({
        id: 'sdk',
        models: ['gpt'],
        options: { baseURL: `${server.base}/v1`, maxRetries: 0 },
        moduleUrl: example,
      }),
    );
  });
  afterAll(() => server.close());
  afterEach(() => server.reset());
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
    data: { choices: [{ index: 0, delta: d, finish_reason: finish }] },
  });

  it('streams text and parallel tool calls through the official client', async () => {
    server.push(
      sseFrames([
        delta({ content: 'checking' }),
        delta({
          tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'search', arguments: '{"q":' } }],
        }),
        delta({
          tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'read', arguments: '{}' } }],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }),
        delta({}, 'tool_calls'),
        { data: { choices: [], usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } } },
        '[DONE]',
      ]),
    );
    const deltas: string[] = [];
    const tools = [{ name: 'search', description: 'find', parameters: { type: 'object' } }];
    const response = await adapter.request(
      makeRequest([user('q')], {
        system: 'sys',
        tools,
        route: { provider: 'sdk', model: 'gpt' },
        onTextDelta: (d) => deltas.push(d),
      }),
    );
    expect(response).toEqual({
      text: 'checking',
      finish: 'tool-calls',
      usage: { inputTokens: 11, outputTokens: 4 },
      toolCalls: [
        { callId: 'call_a', name: 'search', arguments: '{"q":"x"}' },
        { callId: 'call_b', name: 'read', arguments: '{}' },
      ],
    });
    expect(deltas).toEqual(['checking']);
    expect(server.seen[0]).toMatchObject({
      url: '/v1/chat/completions',
      body: {
        model: 'gpt',
        stream: true,
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'q' },
        ],
      },
    });
  });

  it('an HTTP error resolves finish error with the SDK message; abort rejects ABORTED', async () => {
    server.push(
      status(400, JSON.stringify({ error: { message: 'unknown model', type: 'invalid_request_error' } }), {
        'content-type': 'application/json',
      }),
    );
    const failed = await adapter.request(makeRequest([user('q')], { route: { provider: 'sdk', model: 'gpt' } }));
    expect(failed.finish).toBe('error');
    expect(failed.diagnostic).toMatch(/400.*unknown model/);

    const held = holdOpen(delta({ content: 'first' }));
    server.push(held.handler);
    const controller = new AbortController();
    const pending = adapter.request(
      makeRequest([user('q')], {
        route: { provider: 'sdk', model: 'gpt' },
        signal: controller.signal,
        onTextDelta: () => controller.abort(),
      }),
    );
    // The example throws the built package's BroodError (a different class object than src's): compare codes.
    await expect(pending).rejects.toMatchObject({ name: 'BroodError', code: 'ABORTED' });
    await held.closed;
  });
});
