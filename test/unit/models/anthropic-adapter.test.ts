/** anthropicCompatible over real loopback HTTP: both modes, tool calls, usage, request body, thinking. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicCompatibleOptions, anthropicCompatible, loadAdapter } from '../../../src/models/index.js';
import type { ModelAdapter } from '../../../src/models/types.js';
import { broodVersion } from '../../../src/version.js';
import { expectCode } from '../../support/codes.js';
import {
  blockStop,
  jsonDelta,
  message,
  messageDelta,
  messageStart,
  messageStop,
  ping,
  signatureDelta,
  textDelta,
  textStart,
  textStream,
  thinkingDelta,
  thinkingStart,
  toolStart,
} from './anthropic-wire.js';
import { assistant, makeRequest, tool, user } from './helpers.js';
import { json, type Loopback, sseFrames, startLoopback } from './loopback.js';

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(() => server.reset());

async function adapter(extra: Partial<AnthropicCompatibleOptions> = {}): Promise<ModelAdapter> {
  return loadAdapter(anthropicCompatible({ id: 'an', baseURL: server.base, models: ['claude'], ...extra }));
}
const route = (extra: Record<string, unknown> = {}) => ({ provider: 'an', model: 'claude', ...extra });

describe('streaming', () => {
  it('streams text with deltas; usage counts cache reads and writes into inputTokens', async () => {
    server.push(
      sseFrames([
        messageStart({
          input_tokens: 10,
          output_tokens: 1,
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 20,
        }),
        ping(),
        textStart(0),
        textDelta(0, 'Hel'),
        textDelta(0, 'lo'),
        blockStop(0),
        messageDelta('end_turn', { output_tokens: 7 }),
        messageStop(),
      ]),
    );
    const deltas: string[] = [];
    const response = await (await adapter({ apiKey: 'sk-ant' })).request(
      makeRequest([user('hi')], { route: route(), onTextDelta: (d) => deltas.push(d) }),
    );
    expect(response).toEqual({
      text: 'Hello',
      toolCalls: [],
      finish: 'stop',
      usage: { inputTokens: 130, outputTokens: 7, cacheReadTokens: 100, cacheWriteTokens: 20 },
    });
    expect(deltas).toEqual(['Hel', 'lo']);
    const seen = server.seen[0]!;
    expect(seen).toMatchObject({ method: 'POST', url: '/v1/messages' });
    expect(seen.headers).toMatchObject({
      'x-api-key': 'sk-ant',
      'anthropic-version': '2023-06-01',
      'user-agent': `brood/${broodVersion()}`,
      accept: 'text/event-stream',
    });
    expect(seen.headers.authorization).toBeUndefined();
  });

  it('merges text and two parallel tool calls whose JSON input is split across deltas', async () => {
    server.push(
      sseFrames([
        messageStart(),
        textStart(0),
        textDelta(0, 'let me look'),
        blockStop(0),
        toolStart(1, 'toolu_a', 'search'),
        jsonDelta(1, ''),
        jsonDelta(1, '{"q":'),
        toolStart(2, 'toolu_b', 'read'),
        jsonDelta(2, '{"pa'),
        jsonDelta(1, '"cats"}'),
        ping(),
        jsonDelta(2, 'th":"/x"}'),
        blockStop(1),
        blockStop(2),
        toolStart(3, 'toolu_c', 'noargs'),
        blockStop(3),
        messageDelta('tool_use', { output_tokens: 30 }),
        messageStop(),
      ]),
    );
    const response = await (await adapter()).request(makeRequest([user('hi')], { route: route() }));
    expect(response).toEqual({
      text: 'let me look',
      finish: 'tool-calls',
      usage: { inputTokens: 0, outputTokens: 30 },
      toolCalls: [
        { callId: 'toolu_a', name: 'search', arguments: '{"q":"cats"}' },
        { callId: 'toolu_b', name: 'read', arguments: '{"path":"/x"}' },
        { callId: 'toolu_c', name: 'noargs', arguments: '{}' },
      ],
    });
  });

  it('maps stop_reason: end_turn/stop_sequence → stop, max_tokens → max-tokens, refusal → refusal', async () => {
    for (const reason of ['end_turn', 'stop_sequence', 'max_tokens', 'refusal'])
      server.push(sseFrames(textStream('t', reason)));
    const a = await adapter();
    const finishes = [];
    for (let i = 0; i < 4; i++) finishes.push((await a.request(makeRequest([user('q')], { route: route() }))).finish);
    expect(finishes).toEqual(['stop', 'stop', 'max-tokens', 'refusal']);
  });
});

describe('non-streaming (stream: false)', () => {
  it('reads a JSON message with text, parallel tool_use blocks and cache usage', async () => {
    server.push(
      json(
        message(
          [
            { type: 'text', text: 'two calls' },
            { type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'cats' } },
            { type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: '/x' } },
          ],
          'tool_use',
          { input_tokens: 5, output_tokens: 9, cache_read_input_tokens: 50, cache_creation_input_tokens: 0 },
        ),
      ),
    );
    const deltas: string[] = [];
    const response = await (await adapter({ stream: false })).request(
      makeRequest([user('q')], { route: route(), onTextDelta: (d) => deltas.push(d) }),
    );
    expect(response).toEqual({
      text: 'two calls',
      finish: 'tool-calls',
      usage: { inputTokens: 55, outputTokens: 9, cacheReadTokens: 50 },
      toolCalls: [
        { callId: 'toolu_1', name: 'search', arguments: '{"q":"cats"}' },
        { callId: 'toolu_2', name: 'read', arguments: '{"path":"/x"}' },
      ],
    });
    expect(deltas).toEqual(['two calls']);
    expect(server.seen[0]!.body.stream).toBe(false);
    expect(server.seen[0]!.headers.accept).toBe('application/json');
  });

  it('a JSON message answering a streaming request is accepted', async () => {
    server.push(json(message([{ type: 'text', text: 'plain json' }], 'end_turn')));
    expect(await (await adapter()).request(makeRequest([user('q')], { route: route() }))).toMatchObject({
      text: 'plain json',
      finish: 'stop',
    });
  });
});

describe('request body', () => {
  it('system on top, input_schema tools, tool_result blocks (is_error), merged turns, no empty messages', async () => {
    server.push(sseFrames(textStream('ok')));
    const messages = [
      user('q'),
      assistant('', [
        { callId: 'c1', name: 'search', arguments: '{"q":1}' },
        { callId: 'c2', name: 'read', arguments: 'not json' },
      ]),
      tool('c1', 'r1', 'search'),
      { role: 'tool' as const, callId: 'c2', name: 'read', content: 'INVALID_ARGS: not json', isError: true },
      assistant('done'),
      assistant(''), // a failed request's placeholder
      user('again'),
    ];
    const tools = [
      { name: 'search', description: 'find', parameters: { type: 'object', properties: { q: { type: 'number' } } } },
    ];
    await (await adapter()).request(makeRequest(messages, { system: 'be brief', tools, route: route() }));
    expect(server.seen[0]!.body).toEqual({
      model: 'claude',
      max_tokens: 4096,
      stream: true,
      system: 'be brief',
      tools: [
        {
          name: 'search',
          description: 'find',
          input_schema: { type: 'object', properties: { q: { type: 'number' } } },
        },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'c1', name: 'search', input: { q: 1 } },
            { type: 'tool_use', id: 'c2', name: 'read', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: 'r1' },
            { type: 'tool_result', tool_use_id: 'c2', content: 'INVALID_ARGS: not json', is_error: true },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
        { role: 'user', content: [{ type: 'text', text: 'again' }] },
      ],
    });
  });

  it("max_tokens: the route's, else the catalog model's, else 4096", async () => {
    for (let i = 0; i < 3; i++) server.push(sseFrames(textStream('ok')));
    const a = await adapter({ models: ['claude', { id: 'capped', maxTokens: 1000 }] });
    await a.request(makeRequest([user('q')], { route: route({ model: 'capped', maxTokens: 50 }) }));
    await a.request(makeRequest([user('q')], { route: route({ model: 'capped' }) }));
    await a.request(makeRequest([user('q')], { route: route() }));
    expect(server.seen.map((s) => s.body.max_tokens)).toEqual([50, 1000, 4096]);
  });

  it('maps request options to Messages fields; per-model keys win; extraBody last; headers merge', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const a = await adapter({
      temperature: 0.5,
      topP: 0.8,
      stop: 'END',
      toolChoice: 'required',
      parallelToolCalls: false,
      responseFormat: { type: 'json_schema', schema },
      headers: { 'anthropic-beta': 'x-2025', 'x-gateway': 'g' },
      extraBody: { top_k: 5 },
      anthropicVersion: '2099-01-01',
      models: [
        'claude',
        {
          id: 'named',
          toolChoice: { name: 'search' },
          parallelToolCalls: true,
          stop: ['A', 'B'],
          headers: { 'x-gateway': 'named' },
        },
        { id: 'quiet', toolChoice: 'none' },
      ],
    });
    const tools = [{ name: 'search', description: 'find', parameters: { type: 'object' } }];
    for (let i = 0; i < 4; i++) server.push(sseFrames(textStream('ok')));
    await a.request(makeRequest([user('q')], { tools, route: route() }));
    await a.request(makeRequest([user('q')], { tools, route: route({ model: 'named' }) }));
    await a.request(makeRequest([user('q')], { tools, route: route({ model: 'quiet' }) }));
    await a.request(makeRequest([user('q')], { route: route() }));
    const [first, named, quiet, toolless] = server.seen.map((s) => s.body);
    expect(first).toMatchObject({
      temperature: 0.5,
      top_p: 0.8,
      stop_sequences: ['END'],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      output_config: { format: { type: 'json_schema', schema } },
      top_k: 5,
    });
    expect(server.seen[0]!.headers).toMatchObject({
      'anthropic-beta': 'x-2025',
      'x-gateway': 'g',
      'anthropic-version': '2099-01-01',
    });
    expect(named).toMatchObject({
      tool_choice: { type: 'tool', name: 'search' },
      stop_sequences: ['A', 'B'],
      temperature: 0.5,
    });
    expect(server.seen[1]!.headers).toMatchObject({ 'anthropic-beta': 'x-2025', 'x-gateway': 'named' });
    expect(quiet).toMatchObject({ tool_choice: { type: 'none' } });
    expect('tool_choice' in toolless!).toBe(false);
  });

  it('rejects options the Messages API does not have with INVALID_CONFIG', () => {
    const bad = (extra: Record<string, unknown>) => () =>
      anthropicCompatible({ id: 'an', baseURL: 'http://x', models: [], ...extra } as AnthropicCompatibleOptions);
    expectCode(bad({ seed: 1 }), 'INVALID_CONFIG');
    expectCode(bad({ models: [{ id: 'm', seed: 1 }] }), 'INVALID_CONFIG');
    expectCode(bad({ maxTokensField: 'max_tokens' }), 'INVALID_CONFIG');
    expectCode(bad({ responseFormat: { type: 'json_object' } }), 'INVALID_CONFIG');
    expectCode(bad({ thinkingBudgets: { low: 10 } }), 'INVALID_CONFIG');
    expectCode(bad({ baseURL: 'ftp://x' }), 'INVALID_CONFIG');
    expect(bad({})).not.toThrow();
  });
});

describe('reasoning effort → extended thinking', () => {
  const thinkingAnswer = () =>
    sseFrames([
      messageStart(),
      thinkingStart(0),
      thinkingDelta(0, 'let me '),
      thinkingDelta(0, 'think'),
      signatureDelta(0, 'sig-123'),
      blockStop(0),
      toolStart(1, 'toolu_t', 'search'),
      jsonDelta(1, '{"q":"x"}'),
      blockStop(1),
      messageDelta('tool_use'),
      messageStop(),
    ]);

  it('sends the table budget (capped below max_tokens), returns the thinking block and sends it back', async () => {
    server.push(thinkingAnswer(), sseFrames(textStream('answer')), sseFrames(textStream('x')));
    const a = await adapter({ models: [{ id: 'claude', efforts: ['low', 'high'], maxTokens: 20000 }] });
    const first = await a.request(makeRequest([user('q')], { route: route({ reasoningEffort: 'high' }) }));
    expect(server.seen[0]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(first.reasoning).toEqual([{ type: 'thinking', thinking: 'let me think', signature: 'sig-123' }]);
    expect(first.toolCalls).toEqual([{ callId: 'toolu_t', name: 'search', arguments: '{"q":"x"}' }]);
    const history = [
      user('q'),
      { role: 'assistant' as const, text: '', toolCalls: first.toolCalls, reasoning: first.reasoning! },
      tool('toolu_t', 'found', 'search'),
    ];
    await a.request(makeRequest(history, { route: route({ reasoningEffort: 'high' }) }));
    const sent = server.seen[1]!.body as { thinking: unknown; messages: { content: unknown[] }[] };
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(sent.messages[1]!.content[0]).toEqual({ type: 'thinking', thinking: 'let me think', signature: 'sig-123' });
    await a.request(makeRequest([user('q')], { route: route({ reasoningEffort: 'high', maxTokens: 3000 }) }));
    expect(server.seen[2]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2999 });
  });

  it('leaves thinking off when answering tool calls whose thinking block was not kept, and for effort none', async () => {
    server.push(sseFrames(textStream('a')), sseFrames(textStream('b')));
    const a = await adapter();
    const history = [
      user('q'),
      assistant('', [{ callId: 'c', name: 'search', arguments: '{}' }]),
      tool('c', 'r', 'search'),
    ];
    await a.request(makeRequest(history, { route: route({ reasoningEffort: 'low' }) }));
    await a.request(makeRequest([user('q')], { route: route({ reasoningEffort: 'none' }) }));
    expect(server.seen.map((s) => 'thinking' in s.body)).toEqual([false, false]);
  });

  it('custom thinkingBudgets; an unknown effort or a max_tokens too small for thinking fails before sending', async () => {
    server.push(sseFrames(textStream('ok')));
    const a = await adapter({ thinkingBudgets: { deep: 5000 } });
    await a.request(makeRequest([user('q')], { route: route({ reasoningEffort: 'deep', maxTokens: 9000 }) }));
    expect(server.seen[0]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 5000 });
    const unknown = await a.request(makeRequest([user('q')], { route: route({ reasoningEffort: 'ultra' }) }));
    expect(unknown.finish).toBe('error');
    expect(unknown.diagnostic).toMatch(
      /^reasoning effort 'ultra' has no thinking budget \(known: minimal, low, medium, high, xhigh, max, deep, none\)$/,
    );
    const small = await a.request(
      makeRequest([user('q')], { route: route({ reasoningEffort: 'low', maxTokens: 1000 }) }),
    );
    expect(small.finish).toBe('error');
    expect(small.diagnostic).toMatch(/max_tokens 1000 leaves no room for extended thinking/);
    expect(server.seen).toHaveLength(1);
  });
});
