/** openAICompatible over real loopback HTTP: both modes and tool calls. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeRequest, user } from './helpers.js';
import { json, type Loopback, sseFrames, startLoopback } from './loopback.js';
import { adapterOn, completion, DONE, delta, usageChunk } from './openai-fixtures.js';

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(() => server.reset());

const adapter = (extra?: Parameters<typeof adapterOn>[1]) => adapterOn(server, extra);

describe('streaming', () => {
  it('streams plain text, reports usage (cached tokens included) and deltas', async () => {
    server.push(
      sseFrames([
        delta({ role: 'assistant', content: '' }),
        delta({ content: 'Hel' }),
        delta({ content: 'lo' }),
        delta({}, 'stop'),
        usageChunk(12, 3, 8),
        DONE,
      ]),
    );
    const deltas: string[] = [];
    const response = await (await adapter()).request(makeRequest([user('hi')], { onTextDelta: (d) => deltas.push(d) }));
    expect(response).toEqual({
      text: 'Hello',
      toolCalls: [],
      finish: 'stop',
      usage: { inputTokens: 12, outputTokens: 3, cacheReadTokens: 8 },
    });
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(server.seen[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
  });

  it('merges two parallel tool calls split across many chunks', async () => {
    server.push(
      sseFrames([
        delta({ content: 'let me' }),
        delta({
          tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'search', arguments: '' } }],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
        delta({
          tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'read', arguments: '{"pa' } }],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '"cats"}' } }] }),
        delta({ tool_calls: [{ index: 1, function: { arguments: 'th":"/x"}' } }] }),
        delta({}, 'tool_calls'),
        DONE,
      ]),
    );
    const response = await (await adapter()).request(makeRequest([user('hi')]));
    expect(response).toEqual({
      text: 'let me',
      finish: 'tool-calls',
      usage: { inputTokens: 0, outputTokens: 0 },
      toolCalls: [
        { callId: 'call_a', name: 'search', arguments: '{"q":"cats"}' },
        { callId: 'call_b', name: 'read', arguments: '{"path":"/x"}' },
      ],
    });
  });

  it('reports tool-calls when calls were streamed even if finish_reason says stop; maps length and content_filter', async () => {
    server.push(
      sseFrames([
        delta({ tool_calls: [{ index: 0, id: 'c', function: { name: 't', arguments: '{}' } }] }),
        delta({}, 'stop'),
        DONE,
      ]),
      sseFrames([delta({ content: 'trunc' }, 'length'), DONE]),
      sseFrames([delta({}, 'content_filter'), DONE]),
      sseFrames([delta({ refusal: 'I can' }), delta({ refusal: 'not.' }), delta({}, 'stop'), DONE]),
    );
    const a = await adapter();
    expect((await a.request(makeRequest([user('x')]))).finish).toBe('tool-calls');
    expect(await a.request(makeRequest([user('q')]))).toMatchObject({ finish: 'max-tokens', text: 'trunc' });
    expect((await a.request(makeRequest([user('q')]))).finish).toBe('refusal');
    expect(await a.request(makeRequest([user('q')]))).toMatchObject({ finish: 'refusal', text: 'I cannot.' });
  });

  it('completion is decided by protocol markers: [DONE] alone, or finish_reason without [DONE]', async () => {
    server.push(
      sseFrames([delta({ content: 'all ' }), delta({ content: 'there' }), DONE]),
      sseFrames([delta({ content: 'ok' }, 'stop')]),
    );
    const a = await adapter();
    expect(await a.request(makeRequest([user('q')]))).toMatchObject({ text: 'all there', finish: 'stop' });
    expect(await a.request(makeRequest([user('q')]))).toMatchObject({ text: 'ok', finish: 'stop' });
  });

  it('parses CRLF events split at arbitrary byte boundaries', async () => {
    const payload = [delta({ content: 'héllo ' }), delta({ content: 'wörld' }, 'stop'), usageChunk(1, 2)]
      .map((c) => `data: ${JSON.stringify(c.data)}\r\n\r\n`)
      .join('')
      .concat(': keep-alive\r\n\r\ndata: [DONE]\r\n\r\n');
    const bytes = Buffer.from(payload);
    server.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let offset = 0;
      const tick = (): void => {
        if (offset >= bytes.length) return void res.end();
        res.write(bytes.subarray(offset, offset + 7));
        offset += 7;
        setTimeout(tick, 1);
      };
      tick();
    });
    const response = await (await adapter()).request(makeRequest([user('q')]));
    expect(response).toMatchObject({ text: 'héllo wörld', finish: 'stop', usage: { inputTokens: 1, outputTokens: 2 } });
  });
});

describe('non-streaming (stream: false)', () => {
  it('sends stream: false and reads a JSON completion with parallel tool calls and usage', async () => {
    server.push(
      json(
        completion(
          {
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"cats"}' } },
              { id: 'call_2', type: 'function', function: { name: 'read', arguments: '{"path":"/x"}' } },
            ],
          },
          'tool_calls',
          { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29, prompt_tokens_details: { cached_tokens: 16 } },
        ),
      ),
    );
    const response = await (await adapter({ stream: false })).request(makeRequest([user('q')]));
    expect(response).toEqual({
      text: '',
      finish: 'tool-calls',
      usage: { inputTokens: 20, outputTokens: 9, cacheReadTokens: 16 },
      toolCalls: [
        { callId: 'call_1', name: 'search', arguments: '{"q":"cats"}' },
        { callId: 'call_2', name: 'read', arguments: '{"path":"/x"}' },
      ],
    });
    expect(server.seen[0]!.body.stream).toBe(false);
    expect('stream_options' in server.seen[0]!.body).toBe(false);
    expect(server.seen[0]!.headers.accept).toBe('application/json');
  });

  it('a JSON text completion calls onTextDelta once with the whole text', async () => {
    server.push(json(completion({ content: 'whole answer' }, 'stop', { prompt_tokens: 3, completion_tokens: 2 })));
    const deltas: string[] = [];
    const response = await (await adapter({ stream: false })).request(
      makeRequest([user('q')], { onTextDelta: (d) => deltas.push(d) }),
    );
    expect(response).toEqual({
      text: 'whole answer',
      toolCalls: [],
      finish: 'stop',
      usage: { inputTokens: 3, outputTokens: 2 },
    });
    expect(deltas).toEqual(['whole answer']);
  });

  it('parses by content-type, not by what was asked: JSON answering a stream request, SSE answering a JSON request', async () => {
    server.push(
      json(completion({ content: 'json anyway' }, 'stop')),
      sseFrames([delta({ content: 'sse anyway' }, 'stop'), DONE]),
    );
    expect(await (await adapter()).request(makeRequest([user('q')]))).toMatchObject({
      text: 'json anyway',
      finish: 'stop',
    });
    expect(await (await adapter({ stream: false })).request(makeRequest([user('q')]))).toMatchObject({
      text: 'sse anyway',
      finish: 'stop',
    });
  });

  it('a per-model stream setting overrides the provider one', async () => {
    server.push(json(completion({ content: 'a' }, 'stop')), sseFrames([delta({ content: 'b' }, 'stop'), DONE]));
    const a = await adapter({ stream: true, models: [{ id: 'plain', stream: false }, 'gpt'] });
    await a.request(makeRequest([user('q')], { route: { provider: 'oa', model: 'plain' } }));
    await a.request(makeRequest([user('q')], { route: { provider: 'oa', model: 'gpt' } }));
    expect(server.seen.map((s) => s.body.stream)).toEqual([false, true]);
  });
});
