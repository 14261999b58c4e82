/**
 * A governed request to a paced provider is written at its slot: the HTTP adapters await
 * ModelRequest.atSlot right before each send (a retry after a 429 included), after the body is built.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { epochNow } from '../../../src/clock.js';
import { sendsAtSlot } from '../../../src/models/http-adapter.js';
import { loadAdapter, openAICompatible, scriptedModels } from '../../../src/models/index.js';
import type { ModelAdapter } from '../../../src/models/types.js';
import { deferred, pause } from '../../support/deferred.js';
import { makeRequest, user } from './helpers.js';
import { type Handler, json, type Loopback, startLoopback, status } from './loopback.js';

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(() => server.reset());

const answer = () =>
  json({ choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] });

async function adapter(): Promise<ModelAdapter> {
  return loadAdapter(openAICompatible({ id: 'oa', baseURL: `${server.base}/v1`, models: ['gpt'], stream: false }));
}

describe('sending at the slot', () => {
  it('writes nothing before atSlot resolves', async () => {
    server.push(answer());
    const slot = deferred();
    const response = (await adapter()).request(makeRequest([user('q')], { atSlot: () => slot.promise }));
    await pause(30);
    expect(server.seen).toHaveLength(0);
    slot.resolve();
    expect(await response).toMatchObject({ finish: 'stop', text: 'ok' });
    expect(server.seen).toHaveLength(1);
  });

  it('awaits atSlot again before a retry the provider asked for, after the retry gate admitted it', async () => {
    server.push(status(429, '{}', { 'retry-after-ms': '5' }), answer());
    const steps: string[] = [];
    const request = makeRequest([user('q')], {
      atSlot: async () => void steps.push(`slot (${server.seen.length} seen)`),
      retryGate: async (retryAfterMs) => void steps.push(`gate ${retryAfterMs}`),
    });
    expect(await (await adapter()).request(request)).toMatchObject({ finish: 'stop' });
    expect(steps).toEqual(['slot (0 seen)', 'gate 5', 'slot (1 seen)']);
  });

  it('tells onWrite when each attempt is written, before the provider reads it', async () => {
    const writes: number[] = [];
    const readAfter: number[] = [];
    const record =
      (handler: Handler): Handler =>
      (req, res, seen) => {
        readAfter.push(writes.length);
        handler(req, res, seen);
      };
    server.push(record(status(429, '{}', { 'retry-after-ms': '1' })), record(answer()));
    const request = makeRequest([user('q')], {
      atSlot: async () => {},
      retryGate: async () => {},
      onWrite: (at) => void writes.push(at),
    });
    const before = epochNow();
    expect(await (await adapter()).request(request)).toMatchObject({ finish: 'stop' });
    expect(readAfter).toEqual([1, 2]);
    expect(writes[0]).toBeGreaterThanOrEqual(before);
  });

  it('is what the HTTP adapters do; other adapters are sent at their slot by the driver', async () => {
    expect(sendsAtSlot(await adapter())).toBe(true);
    expect(sendsAtSlot(await loadAdapter(scriptedModels({ id: 's', scripts: [] })))).toBe(false);
  });
});
