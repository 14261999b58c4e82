/**
 * The parent's side of aiSdkModels' proxied shape is a trust boundary: calls come from drivers'
 * threads. It answers only well-formed calls, for the providers and models it holds, and a stream
 * only to the agent that opened it; it batches the parts that arrived, as plain data.
 */
import { APICallError } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { aiSdkModels } from '../../../src/index.js';
import { callOptionsFor } from '../../../src/models/ai-sdk/call-options.js';
import { ModelProxy } from '../../../src/models/ai-sdk/proxy-server.js';
import type { ModelRequest } from '../../../src/models/types.js';
import { expectCode } from '../../support/codes.js';

const finish = {
  type: 'finish',
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
};

function proxyFor(model: MockLanguageModelV4): ModelProxy {
  const proxy = ModelProxy.for([aiSdkModels({ id: 'p', models: { m1: model } })]);
  if (proxy === undefined) throw new Error('no proxy');
  return proxy;
}

const open = { op: 'open', provider: 'p', model: 'm1', options: { prompt: [] } };

describe('ModelProxy', () => {
  it('refuses malformed calls and models it does not hold', async () => {
    const proxy = proxyFor(new MockLanguageModelV4());
    await expectCode(proxy.handle('a1', { op: 'drop-tables' }), 'INVALID_CONFIG');
    await expectCode(proxy.handle('a1', { ...open, options: { prompt: 'not an array' } }), 'INVALID_CONFIG');
    await expectCode(proxy.handle('a1', { op: 'pull', id: 42 }), 'INVALID_CONFIG');
    await expectCode(proxy.handle('a1', { ...open, model: 'other' }), 'UNKNOWN_MODEL');
    await expectCode(proxy.handle('a1', { ...open, provider: 'other' }), 'UNKNOWN_MODEL');
  });

  it("serves a stream only to the agent that opened it: another agent's pull or cancel sees nothing", async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: convertArrayToReadableStream([{ type: 'text-delta', id: 't', delta: 'mine' }, finish] as never[]),
      }),
    });
    const proxy = proxyFor(model);
    const { id } = (await proxy.handle('a1', open)) as { id: string };
    expect(await proxy.handle('a2', { op: 'cancel', id })).toEqual({ parts: [], done: true });
    expect(await proxy.handle('a2', { op: 'pull', id })).toEqual({ parts: [], done: true });
    const parts: unknown[] = [];
    for (let done = false; !done; ) {
      const reply = (await proxy.handle('a1', { op: 'pull', id })) as { parts: unknown[]; done: boolean };
      parts.push(...reply.parts);
      done = reply.done;
    }
    expect(parts).toEqual([{ type: 'text-delta', id: 't', delta: 'mine' }, finish]);
  });

  it("ends an agent's open call when the agent goes (endOwner), and a newer request of the agent ends its last", async () => {
    const signals: AbortSignal[] = [];
    const model = new MockLanguageModelV4({
      doStream: async ({ abortSignal }) => {
        if (abortSignal) signals.push(abortSignal);
        return { stream: new ReadableStream({}) }; // never ends
      },
    });
    const proxy = proxyFor(model);
    await proxy.handle('a1', open);
    await proxy.handle('a1', open);
    expect(signals.map((signal) => signal.aborted)).toEqual([true, false]);
    proxy.endOwner('a1');
    expect(signals[1]?.aborted).toBe(true);
  });

  it("answers a call's failure as plain data: status, lower-case headers, isRetryable", async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => {
        throw new APICallError({
          message: 'slow down',
          url: 'u',
          requestBodyValues: {},
          statusCode: 429,
          responseHeaders: { 'Retry-After': '2' },
          isRetryable: true,
        });
      },
    });
    expect(await proxyFor(model).handle('a1', open)).toEqual({
      failure: {
        name: 'AI_APICallError',
        message: 'slow down',
        statusCode: 429,
        responseHeaders: { 'retry-after': '2' },
        isRetryable: true,
      },
    });
  });
});

it("sends the turn's trace headers (telemetry) as the call's headers", () => {
  const request = {
    route: { provider: 'p', model: 'm1' },
    system: '',
    messages: [{ role: 'user', text: 'hi' }],
    ownStart: 0,
    tools: [],
    signal: new AbortController().signal,
    traceHeaders: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  } satisfies ModelRequest;
  expect(callOptionsFor(request, undefined, 'v4').options.headers).toEqual(request.traceHeaders);
});
