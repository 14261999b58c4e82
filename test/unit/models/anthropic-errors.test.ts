/** anthropicCompatible error classes over real loopback HTTP; retry delays are tiny via the `retry` option. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicCompatibleOptions, anthropicCompatible, loadAdapter } from '../../../src/models/index.js';
import type { ModelAdapter } from '../../../src/models/types.js';
import { expectCode } from '../../support/codes.js';
import { until } from '../../support/until.js';
import { errorEvent, messageStart, textDelta, textStart, textStream } from './anthropic-wire.js';
import { makeRequest, user } from './helpers.js';
import { dropAfter, holdOpen, json, type Loopback, refusedPort, sseFrames, startLoopback, status } from './loopback.js';

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(() => server.reset());

const fast = { retries: 2, baseDelayMs: 1, maxDelayMs: 5 };
const apiError = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message } });
const jsonHeaders = { 'content-type': 'application/json' };

async function adapter(extra: Partial<AnthropicCompatibleOptions> = {}): Promise<ModelAdapter> {
  return loadAdapter(
    anthropicCompatible({ id: 'an', baseURL: server.base, models: ['claude'], retry: fast, ...extra }),
  );
}
const ask = (a: ModelAdapter, extra: Parameters<typeof makeRequest>[1] = {}) =>
  a.request(makeRequest([user('q')], { route: { provider: 'an', model: 'claude' }, ...extra }));

describe('HTTP errors', () => {
  it('4xx JSON error bodies: not retried, the message is kept', async () => {
    server.push(
      status(400, apiError('invalid_request_error', 'max_tokens: Field required'), jsonHeaders),
      status(401, apiError('authentication_error', 'invalid x-api-key'), jsonHeaders),
    );
    const a = await adapter();
    expect(await ask(a)).toMatchObject({
      finish: 'error',
      diagnostic: 'HTTP 400 Bad Request: max_tokens: Field required',
    });
    expect((await ask(a)).diagnostic).toBe('HTTP 401 Unauthorized: invalid x-api-key');
    expect(server.seen).toHaveLength(2);
  });

  it('5xx (and 529 overloaded) then success; exhausted retries report the last status', async () => {
    server.push(
      status(529, apiError('overloaded_error', 'Overloaded'), jsonHeaders),
      status(500, ''),
      sseFrames(textStream('ok')),
    );
    expect(await ask(await adapter())).toMatchObject({ finish: 'stop', text: 'ok' });
    expect(server.seen).toHaveLength(3);
    server.reset();
    server.push(status(503, ''), status(503, ''), status(529, apiError('overloaded_error', 'Overloaded'), jsonHeaders));
    expect((await ask(await adapter())).diagnostic).toMatch(/^HTTP 529\b.*: Overloaded \(after 3 attempts\)$/);
  });

  it('429 with retry-after is honoured; one longer than maxRetryAfterMs is reported', async () => {
    const slowBackoff = { retries: 2, baseDelayMs: 600_000, maxDelayMs: 600_000 };
    server.push(
      status(429, apiError('rate_limit_error', 'slow'), { ...jsonHeaders, 'retry-after': '0.01' }),
      sseFrames(textStream('ok')),
    );
    expect(await ask(await adapter({ retry: slowBackoff }))).toMatchObject({ finish: 'stop', text: 'ok' });
    server.reset();
    server.push(
      status(429, apiError('rate_limit_error', 'Number of requests has exceeded your rate limit'), {
        ...jsonHeaders,
        'retry-after': '20',
      }),
    );
    const response = await ask(await adapter({ retry: { maxRetryAfterMs: 1000 } }));
    expect(response.diagnostic).toMatch(
      /^HTTP 429 Too Many Requests: Number of requests has exceeded your rate limit; the server asked to retry after 20 s/,
    );
    expect(server.seen).toHaveLength(1);
  });

  it('connection refused: retried, then reported with the cause', async () => {
    const port = await refusedPort();
    const a = await loadAdapter(
      anthropicCompatible({
        id: 'an',
        baseURL: `http://127.0.0.1:${port}`,
        models: [],
        retry: { retries: 1, baseDelayMs: 1 },
      }),
    );
    expect((await ask(a)).diagnostic).toMatch(/^network error: .*ECONNREFUSED.*\(after 2 attempts\)$/);
  });
});

describe('broken bodies', () => {
  it('mid-stream drop: error keeping the text received, never retried', async () => {
    server.push(dropAfter([messageStart(), textStart(0), textDelta(0, 'half an ')]), sseFrames(textStream('never')));
    const response = await ask(await adapter());
    expect(response).toMatchObject({ finish: 'error', text: 'half an ', toolCalls: [] });
    expect(response.diagnostic).toMatch(/^stream failed|malformed stream: ended before message_stop/);
    expect(server.seen).toHaveLength(1);
  });

  it('malformed event, a stream cut off before message_stop, an error event mid-stream', async () => {
    server.push(
      sseFrames([
        messageStart(),
        textStart(0),
        textDelta(0, 'a'),
        { event: 'content_block_delta', data: '{"type":"content_block_delta",' },
      ]),
      sseFrames([messageStart(), textStart(0), textDelta(0, 'cut')]),
      sseFrames([messageStart(), textStart(0), textDelta(0, 'x'), errorEvent('Overloaded')]),
      sseFrames([messageStart(), textDelta(5, 'orphan')]),
    );
    const a = await adapter();
    const bad = await ask(a);
    expect(bad).toMatchObject({ finish: 'error', text: 'a' });
    expect(bad.diagnostic).toMatch(/^malformed stream: invalid JSON event/);
    expect(await ask(a)).toMatchObject({
      finish: 'error',
      text: 'cut',
      diagnostic: 'malformed stream: ended before message_stop',
    });
    expect(await ask(a)).toMatchObject({
      finish: 'error',
      text: 'x',
      diagnostic: 'server error in stream: Overloaded',
    });
    expect((await ask(a)).diagnostic).toBe('malformed stream: delta for unknown content block 5');
  });

  it('wrong content-type, invalid JSON, an error object with status 200', async () => {
    server.push(
      status(200, '<html>proxy login</html>', { 'content-type': 'text/html' }),
      status(200, '{"type":"mess', jsonHeaders),
      json({ type: 'error', error: { type: 'api_error', message: 'internal' } }),
      json({ type: 'message', role: 'assistant' }),
    );
    const a = await adapter();
    expect((await ask(a)).diagnostic).toBe(
      `unexpected content-type 'text/html' (HTTP 200); expected JSON or an event stream: "<html>proxy login</html>"`,
    );
    expect((await ask(a)).diagnostic).toMatch(/^malformed response: invalid JSON body/);
    expect((await ask(a)).diagnostic).toBe('server error: internal');
    expect((await ask(a)).diagnostic).toBe('malformed response: message without a content array');
    expect(server.seen).toHaveLength(4);
  });
});

describe('abort', () => {
  it('mid-stream: rejects ABORTED and closes the connection', async () => {
    const held = holdOpen({ event: 'message_start', data: messageStart().data });
    server.push((req, res, seen) => {
      held.handler(req, res, seen);
      res.write(`event: content_block_start\ndata: ${JSON.stringify(textStart(0).data)}\n\n`);
      res.write(`event: content_block_delta\ndata: ${JSON.stringify(textDelta(0, 'first').data)}\n\n`);
    });
    const controller = new AbortController();
    const got: string[] = [];
    const pending = ask(await adapter(), {
      signal: controller.signal,
      onTextDelta: (d) => {
        got.push(d);
        controller.abort();
      },
    });
    await expectCode(pending, 'ABORTED');
    expect(got).toEqual(['first']);
    await held.closed;
  });

  it('while waiting to retry', async () => {
    server.push(status(529, '', { 'retry-after': '30' }));
    const controller = new AbortController();
    const pending = ask(await adapter(), { signal: controller.signal });
    await until(() => server.seen.length > 0);
    controller.abort();
    await expectCode(pending, 'ABORTED');
  });
});
