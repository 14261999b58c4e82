import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadAdapter, openAICompatible, type OpenAICompatibleOptions } from '../../src/models/index.js';
import type { ModelAdapter } from '../../src/models/types.js';
import { assistant, makeRequest, rejectionCode, tool, user } from './helpers.js';

interface Seen {
  url: string;
  method: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  at: number;
}
type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

let server: Server;
let base: string;
let handlers: Handler[] = [];
let seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const entry: Seen = { url: req.url ?? '', method: req.method ?? '', headers: req.headers, body: raw === '' ? {} : JSON.parse(raw), at: performance.now() };
      seen.push(entry);
      const handler = handlers.shift();
      if (handler === undefined) {
        res.writeHead(599).end('no handler');
        return;
      }
      handler(req, res, entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  handlers = [];
  seen = [];
});

function sse(chunks: unknown[], opts: { done?: boolean } = {}): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of chunks) res.write(`data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`);
    if (opts.done !== false) res.write('data: [DONE]\n\n');
    res.end();
  };
}
const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] });
const usageChunk = (p: number, c: number) => ({ choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });
const status = (code: number, body: string, headers: Record<string, string> = {}): Handler => (_req, res) => res.writeHead(code, headers).end(body);

async function adapter(extra: Partial<OpenAICompatibleOptions> = {}): Promise<ModelAdapter> {
  return loadAdapter(openAICompatible({ id: 'oa', baseURL: `${base}/v1/`, models: [{ id: 'gpt' }], ...extra }));
}

describe('openai-compatible adapter over loopback HTTP', () => {
  it('streams plain text, reports usage and deltas', async () => {
    handlers.push(sse([delta({ role: 'assistant', content: '' }), delta({ content: 'Hel' }), delta({ content: 'lo' }), delta({}, 'stop'), usageChunk(12, 3)]));
    const deltas: string[] = [];
    const response = await (await adapter()).request(makeRequest([user('hi')], { onTextDelta: (d) => deltas.push(d) }));
    expect(response).toEqual({ text: 'Hello', toolCalls: [], finish: 'stop', usage: { inputTokens: 12, outputTokens: 3 } });
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
  });

  it('merges two parallel tool calls split across many chunks', async () => {
    handlers.push(
      sse([
        delta({ content: 'let me' }),
        delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'search', arguments: '' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
        delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'read', arguments: '{"pa' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '"cats"}' } }] }),
        delta({ tool_calls: [{ index: 1, function: { arguments: 'th":"/x"}' } }] }),
        delta({}, 'tool_calls'),
      ]),
    );
    const response = await (await adapter()).request(makeRequest([user('hi')]));
    expect(response.finish).toBe('tool-calls');
    expect(response.text).toBe('let me');
    expect(response.toolCalls).toEqual([
      { callId: 'call_a', name: 'search', arguments: '{"q":"cats"}' },
      { callId: 'call_b', name: 'read', arguments: '{"path":"/x"}' },
    ]);
    expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('reports tool-calls when calls were streamed even if finish_reason says stop', async () => {
    handlers.push(sse([delta({ tool_calls: [{ index: 0, id: 'c', function: { name: 't', arguments: '{}' } }] }), delta({}, 'stop')]));
    expect((await (await adapter()).request(makeRequest([user('x')]))).finish).toBe('tool-calls');
  });

  it('sends the documented request body and headers', async () => {
    handlers.push(sse([delta({ content: 'ok' }, 'stop')]), sse([delta({ content: 'ok' }, 'stop')]));
    const messages = [
      user('q'),
      assistant('', [{ callId: 'c1', name: 'search', arguments: '{"q":1}' }, { callId: 'c2', name: 'read', arguments: 'raw' }]),
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
    const body = seen[0]!.body;
    expect(body).toEqual({
      model: 'gpt-x',
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'high',
      max_tokens: 77,
      tools: [{ type: 'function', function: { name: 'search', description: 'find', parameters: { type: 'object', properties: {} } } }],
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
        { role: 'assistant', content: 'thinking', tool_calls: [{ id: 'c3', type: 'function', function: { name: 'search', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c3', content: 'r3' },
        { role: 'assistant', content: 'done' },
        { role: 'user', content: 'again' },
      ],
    });
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-direct');
    expect(seen[0]!.headers['content-type']).toBe('application/json');

    await (await adapter({ maxTokensField: 'max_completion_tokens' })).request(makeRequest([user('q')], { route: { provider: 'oa', model: 'gpt', maxTokens: 5 } }));
    const second = seen[1]!.body;
    expect(second.max_completion_tokens).toBe(5);
    expect('max_tokens' in second).toBe(false);
    expect('tools' in second).toBe(false);
    expect('reasoning_effort' in second).toBe(false);
    expect(second.messages).toEqual([{ role: 'user', content: 'q' }]);
    expect(seen[1]!.headers.authorization).toBeUndefined();
  });

  it('reads the key from apiKeyEnv at request time', async () => {
    const name = 'BROOD_TEST_OPENAI_KEY';
    process.env[name] = 'sk-env';
    try {
      handlers.push(sse([delta({ content: 'ok' }, 'stop')]));
      await (await adapter({ apiKeyEnv: name })).request(makeRequest([user('q')]));
      expect(seen[0]!.headers.authorization).toBe('Bearer sk-env');
    } finally {
      delete process.env[name];
    }
  });

  it('maps finish reasons length and content_filter', async () => {
    handlers.push(sse([delta({ content: 'trunc' }, 'length')]), sse([delta({}, 'content_filter')]));
    const a = await adapter();
    expect(await a.request(makeRequest([user('q')]))).toMatchObject({ finish: 'max-tokens', text: 'trunc' });
    expect((await a.request(makeRequest([user('q')]))).finish).toBe('refusal');
  });

  it('retries 429 with retry-after, then succeeds', async () => {
    handlers.push(status(429, '{"error":{"message":"slow down"}}', { 'retry-after': '0.3' }), sse([delta({ content: 'ok' }, 'stop')]));
    const response = await (await adapter()).request(makeRequest([user('q')]));
    expect(response).toMatchObject({ finish: 'stop', text: 'ok' });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(280);
  });

  it('caps retry-after at 2 s', async () => {
    handlers.push(status(503, '', { 'retry-after': '30' }), sse([delta({ content: 'ok' }, 'stop')]));
    expect((await (await adapter()).request(makeRequest([user('q')]))).text).toBe('ok');
    const gap = seen[1]!.at - seen[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(1900);
    expect(gap).toBeLessThan(2600);
  });

  it('gives up after two retries of 500 with exponential backoff', async () => {
    handlers.push(status(500, 'boom'), status(500, 'boom'), status(500, 'boom'), sse([delta({ content: 'never' }, 'stop')]));
    const response = await (await adapter()).request(makeRequest([user('q')]));
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toMatch(/500/);
    expect(seen).toHaveLength(3);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(180);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(380);
  });

  it('does not retry 400 and includes the JSON error message', async () => {
    handlers.push(status(400, JSON.stringify({ error: { message: 'model xyz does not exist', type: 'invalid_request_error' } })));
    const response = await (await adapter()).request(makeRequest([user('q')]));
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toMatch(/400/);
    expect(response.diagnostic).toContain('model xyz does not exist');
    expect(seen).toHaveLength(1);
  });

  it('reports connection refused as an error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const a = await loadAdapter(openAICompatible({ id: 'x', baseURL: `http://127.0.0.1:${port}`, models: [] }));
    const response = await a.request(makeRequest([user('q')]));
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toMatch(/ECONNREFUSED/);
  });

  it('reports malformed streams as errors', async () => {
    handlers.push(
      sse([delta({ content: 'a' }), '{not json'], { done: false }),
      sse([delta({ content: 'partial' })], { done: false }),
      sse(['{"error":{"message":"overloaded mid-stream"}}']),
    );
    const a = await adapter();
    const bad = await a.request(makeRequest([user('q')]));
    expect(bad.finish).toBe('error');
    expect(bad.diagnostic).toMatch(/malformed/);
    const truncated = await a.request(makeRequest([user('q')]));
    expect(truncated.finish).toBe('error');
    expect(truncated.diagnostic).toMatch(/malformed/);
    const midError = await a.request(makeRequest([user('q')]));
    expect(midError.finish).toBe('error');
    expect(midError.diagnostic).toContain('overloaded mid-stream');
  });

  it('parses CRLF events split at arbitrary byte boundaries', async () => {
    const payload = [delta({ content: 'héllo ' }), delta({ content: 'wörld' }, 'stop'), usageChunk(1, 2)]
      .map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`)
      .join('')
      .concat(': keep-alive\r\n\r\ndata: [DONE]\r\n\r\n');
    const bytes = Buffer.from(payload);
    handlers.push((_req, res) => {
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

  it('rejects ABORTED mid-stream and closes the connection', async () => {
    let closedAt = 0;
    const serverSawClose = new Promise<void>((resolve) => {
      handlers.push((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(delta({ content: 'first' }))}\n\n`);
        res.on('close', () => {
          closedAt = performance.now();
          resolve();
        });
      });
    });
    const controller = new AbortController();
    const got: string[] = [];
    const pending = (await adapter()).request(
      makeRequest([user('q')], {
        signal: controller.signal,
        onTextDelta: (d) => {
          got.push(d);
          controller.abort();
        },
      }),
    );
    const started = performance.now();
    expect(await rejectionCode(pending)).toBe('ABORTED');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(got).toEqual(['first']);
    await serverSawClose;
    expect(closedAt).toBeGreaterThan(0);
  });

  it('rejects ABORTED while waiting to retry', async () => {
    handlers.push(status(429, '', { 'retry-after': '2' }));
    const controller = new AbortController();
    const pending = (await adapter()).request(makeRequest([user('q')], { signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    expect(await rejectionCode(pending)).toBe('ABORTED');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
