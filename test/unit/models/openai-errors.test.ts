/** openAICompatible error classes over real loopback HTTP; retry delays are tiny via the `retry` option. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/defaults.js';
import { loadAdapter, type OpenAICompatibleOptions, openAICompatible } from '../../../src/models/index.js';
import type { ModelAdapter } from '../../../src/models/types.js';
import { expectCode } from '../../support/codes.js';
import { until } from '../../support/until.js';
import { makeRequest, user } from './helpers.js';
import { dropAfter, holdOpen, json, type Loopback, refusedPort, sseFrames, startLoopback, status } from './loopback.js';

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(() => server.reset());

const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
  data: { choices: [{ index: 0, delta: d, finish_reason: finish }] },
});
const ok = () => sseFrames([delta({ content: 'ok' }, 'stop'), '[DONE]']);
const fast = { retries: 2, baseDelayMs: 1, maxDelayMs: 5 };

async function adapter(extra: Partial<OpenAICompatibleOptions> = {}): Promise<ModelAdapter> {
  return loadAdapter(
    openAICompatible({ id: 'oa', baseURL: `${server.base}/v1`, models: ['gpt'], retry: fast, ...extra }),
  );
}
const ask = async (a: ModelAdapter) => a.request(makeRequest([user('q')]));

describe('HTTP errors', () => {
  it('4xx: not retried; the diagnostic keeps the most useful server text', async () => {
    server.push(
      status(400, JSON.stringify({ error: { message: 'model xyz does not exist', type: 'invalid_request_error' } }), {
        'content-type': 'application/json',
      }),
      status(404, JSON.stringify({ error: 'Not Found', message: 'Cannot POST /v1/chat/completions' }), {
        'content-type': 'application/json',
      }),
      status(401, JSON.stringify({ error: 'invalid api key' })),
      status(404, '<html><body>nope</body></html>', { 'content-type': 'text/html' }),
    );
    const a = await adapter();
    const first = await ask(a);
    expect(first).toMatchObject({ finish: 'error', text: '', toolCalls: [] });
    expect(first.diagnostic).toBe('HTTP 400 Bad Request: model xyz does not exist');
    expect((await ask(a)).diagnostic).toBe('HTTP 404 Not Found: Cannot POST /v1/chat/completions');
    expect((await ask(a)).diagnostic).toBe('HTTP 401 Unauthorized: invalid api key');
    expect((await ask(a)).diagnostic).toBe('HTTP 404 Not Found');
    expect(server.seen).toHaveLength(4);
  });

  it('5xx then success: retried with backoff, one completion', async () => {
    server.push(status(500, 'boom'), status(503, ''), ok());
    expect(await ask(await adapter())).toMatchObject({ finish: 'stop', text: 'ok' });
    expect(server.seen).toHaveLength(3);
  });

  it('gives up after `retries` retries and says how many attempts were made', async () => {
    server.push(status(500, 'boom'), status(502, 'boom'), status(500, 'still boom'), ok());
    const response = await ask(await adapter());
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toBe('HTTP 500 Internal Server Error: still boom (after 3 attempts)');
    expect(server.seen).toHaveLength(3);
    server.reset();
    server.push(status(500, 'boom'), ok());
    expect((await ask(await adapter({ retry: { retries: 0 } }))).finish).toBe('error');
    expect(server.seen).toHaveLength(1);
  });

  it('429 with retry-after: the server-given delay is used instead of the backoff', async () => {
    // A backoff this long would time the test out: finishing proves retry-after (10 ms) was used.
    const slowBackoff = { retries: 2, baseDelayMs: 600_000, maxDelayMs: 600_000 };
    server.push(
      status(429, '{"error":{"message":"slow down"}}', { 'retry-after': '0.01' }),
      status(429, '', { 'retry-after-ms': '5' }),
      ok(),
    );
    expect(await ask(await adapter({ retry: slowBackoff }))).toMatchObject({ finish: 'stop', text: 'ok' });
    expect(server.seen).toHaveLength(3);
  });

  it('429 asking for longer than maxRetryAfterMs is reported at once, with the server text', async () => {
    server.push(status(429, '{"error":{"message":"rate limited"}}', { 'retry-after': '20' }), ok());
    const response = await ask(await adapter({ retry: { maxRetryAfterMs: 5000 } }));
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toMatch(
      /^HTTP 429 Too Many Requests: rate limited; the server asked to retry after 20 s/,
    );
    expect(server.seen).toHaveLength(1);
    expect(DEFAULTS.retry).toEqual({ retries: 2, baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60_000 });
  });

  it('a governed 429 asking for longer than maxRetryAfterMs fails at once: no provider pause is asked for', async () => {
    server.push(status(429, '{"error":{"message":"rate limited"}}', { 'retry-after': '99999' }), ok());
    const gated: (number | undefined)[] = [];
    const request = { ...makeRequest([user('q')]), retryGate: async (ms: number | undefined) => void gated.push(ms) };
    const response = await (await adapter()).request(request);
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toMatch(/retry after 99999 s, more than maxRetryAfterMs \(60000 ms\)$/);
    expect(gated).toEqual([]);
    expect(server.seen).toHaveLength(1);
  });

  it('refuses a retry wait no timer can take (INVALID_CONFIG)', () => {
    const options = (retry: object) => ({ id: 'oa', baseURL: `${server.base}/v1`, models: ['gpt'], retry });
    expectCode(() => openAICompatible(options({ maxRetryAfterMs: 2 ** 31 })), 'INVALID_CONFIG');
    expectCode(() => openAICompatible(options({ maxDelayMs: 2 ** 31 })), 'INVALID_CONFIG');
    expect(() => openAICompatible(options({ maxRetryAfterMs: 2 ** 31 - 1 }))).not.toThrow();
  });

  it('connection refused: retried, then reported with the cause', async () => {
    const port = await refusedPort();
    const a = await loadAdapter(
      openAICompatible({
        id: 'x',
        baseURL: `http://127.0.0.1:${port}/v1`,
        models: [],
        retry: { retries: 1, baseDelayMs: 1 },
      }),
    );
    const response = await ask(a);
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toMatch(/^network error: .*ECONNREFUSED.*\(after 2 attempts\)$/);
  });
});

describe('broken bodies', () => {
  it('mid-stream drop: error keeping the text received, never retried', async () => {
    server.push(dropAfter([delta({ content: 'partial ' }), delta({ content: 'answer' })]), ok());
    const deltas: string[] = [];
    const response = await (await adapter()).request(makeRequest([user('q')], { onTextDelta: (d) => deltas.push(d) }));
    expect(response).toMatchObject({ finish: 'error', text: 'partial answer', toolCalls: [] });
    expect(response.diagnostic).toMatch(/^stream failed|malformed stream: ended before completion/);
    expect(deltas).toEqual(['partial ', 'answer']);
    expect(server.seen).toHaveLength(1);
  });

  it('malformed chunk, a stream cut off without any completion marker, an error event mid-stream', async () => {
    server.push(
      sseFrames([delta({ content: 'a' }), '{not json']),
      sseFrames([delta({ content: 'partial' })]),
      sseFrames([delta({ content: 'x' }), '{"error":{"message":"overloaded mid-stream"}}']),
    );
    const a = await adapter();
    const bad = await ask(a);
    expect(bad).toMatchObject({ finish: 'error', text: 'a' });
    expect(bad.diagnostic).toMatch(/^malformed stream: invalid JSON chunk/);
    const truncated = await ask(a);
    expect(truncated).toMatchObject({
      finish: 'error',
      text: 'partial',
      diagnostic: 'malformed stream: ended before completion',
    });
    expect((await ask(a)).diagnostic).toBe('server error in stream: overloaded mid-stream');
    expect(server.seen).toHaveLength(3);
  });

  it('a JSON body cut off mid-way: an error saying the response failed, never retried', async () => {
    server.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"object":"chat.completion","choices":[{"index":0,');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const response = await ask(await adapter({ stream: false }));
    expect(response.finish).toBe('error');
    expect(response.diagnostic).toMatch(/^response failed: /);
    expect(server.seen).toHaveLength(1);
  });

  it('wrong content-type and invalid JSON bodies are errors naming what arrived', async () => {
    server.push(
      status(200, '<html>captive portal</html>', { 'content-type': 'text/html; charset=utf-8' }),
      status(200, 'not json at all', { 'content-type': 'application/json' }),
      json({ object: 'chat.completion', choices: [] }),
      json({ error: { message: 'quota exceeded' } }),
    );
    const a = await adapter();
    expect((await ask(a)).diagnostic).toBe(
      `unexpected content-type 'text/html; charset=utf-8' (HTTP 200); expected JSON or an event stream: "<html>captive portal</html>"`,
    );
    expect((await ask(a)).diagnostic).toMatch(/^malformed response: invalid JSON body/);
    expect((await ask(a)).diagnostic).toBe('malformed response: no choices in the completion');
    expect((await ask(a)).diagnostic).toBe('server error: quota exceeded');
    expect(server.seen).toHaveLength(4);
  });
});

describe('abort', () => {
  it('mid-stream: rejects ABORTED and closes the connection', async () => {
    const held = holdOpen(delta({ content: 'first' }));
    server.push(held.handler);
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
    await expectCode(pending, 'ABORTED');
    expect(got).toEqual(['first']);
    await held.closed;
  });

  it('while waiting for the response headers: rejects ABORTED and closes the connection', async () => {
    let closed!: Promise<void>;
    server.push((_req, res) => {
      closed = new Promise((resolve) => res.on('close', resolve));
    });
    const controller = new AbortController();
    const pending = (await adapter()).request(makeRequest([user('q')], { signal: controller.signal }));
    await until(() => server.seen.length > 0);
    controller.abort();
    await expectCode(pending, 'ABORTED');
    await closed;
  });

  it('while waiting to retry, and before sending', async () => {
    server.push(status(429, '', { 'retry-after': '30' }));
    const controller = new AbortController();
    const pending = (await adapter()).request(makeRequest([user('q')], { signal: controller.signal }));
    await until(() => server.seen.length > 0);
    controller.abort();
    await expectCode(pending, 'ABORTED');
    await expectCode((await adapter()).request(makeRequest([user('q')], { signal: AbortSignal.abort() })), 'ABORTED');
    expect(server.seen).toHaveLength(1);
  });
});
