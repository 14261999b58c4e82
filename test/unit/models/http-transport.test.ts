/**
 * The HTTP adapters' transport. They keep their connections: requests one after another travel over
 * one keep-alive connection, streamed or not (a new connection per request would mean, over TLS, a
 * handshake per model request). A stream that goes on after its end marker holds its answer for at
 * most a second, and its connection is dropped instead of reused. A compressed answer (a configured
 * `accept-encoding` header asked for one) is read decompressed.
 */
import type { Socket } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeRequest, user } from './helpers.js';
import { json, type Loopback, sseFrames, startLoopback } from './loopback.js';
import { adapterOn, completion, DONE, delta } from './openai-fixtures.js';

let server: Loopback;
beforeEach(async () => {
  server = await startLoopback();
});
afterEach(() => server.close());

const streamed = (text: string) => sseFrames([delta({ content: text }), delta({}, 'stop'), DONE]);

describe('connections', () => {
  it('three streamed answers, then three JSON answers, one after another: one connection', async () => {
    const adapter = await adapterOn(server);
    const texts: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      server.push(streamed(text));
      texts.push((await adapter.request(makeRequest([user('hi')]))).text);
    }
    for (const text of ['four', 'five', 'six']) {
      server.push(json(completion({ content: text }, 'stop')));
      texts.push((await adapter.request(makeRequest([user('hi')]))).text);
    }
    expect(texts).toEqual(['one', 'two', 'three', 'four', 'five', 'six']);
    expect(server.connections()).toBe(1);
  });

  it('a stream that goes on after [DONE]: the answer still returns (within a second); its connection is closed, the next request opens another', async () => {
    const adapter = await adapterOn(server);
    let hanging: Socket | undefined;
    server.push((req, res) => {
      hanging = req.socket;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(delta({ content: 'early' }, 'stop').data)}\n\ndata: [DONE]\n\n`);
      // never ends
    });
    const first = await adapter.request(makeRequest([user('hi')]));
    expect(first).toMatchObject({ text: 'early', finish: 'stop' });
    await new Promise((resolve) => (hanging as Socket).once('close', resolve));
    server.push(streamed('next'));
    expect((await adapter.request(makeRequest([user('hi')]))).text).toBe('next');
    expect(server.connections()).toBe(2);
  });
});

describe('compressed answers', () => {
  it('a gzip JSON answer and a brotli stream, asked for by a configured header, read as plain ones', async () => {
    const adapter = await adapterOn(server, { headers: { 'accept-encoding': 'gzip, br' } });
    server.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify(completion({ content: 'zipped' }, 'stop'))));
    });
    server.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'br' });
      const frames = [delta({ content: 'squeezed' }), delta({}, 'stop')].map(
        (f) => `data: ${JSON.stringify(f.data)}\n\n`,
      );
      res.end(brotliCompressSync(`${frames.join('')}data: ${DONE}\n\n`));
    });
    const deltas: string[] = [];
    expect((await adapter.request(makeRequest([user('hi')]))).text).toBe('zipped');
    expect((await adapter.request(makeRequest([user('hi')], { onTextDelta: (d) => deltas.push(d) }))).text).toBe(
      'squeezed',
    );
    expect(deltas).toEqual(['squeezed']);
    expect(server.seen.map((seen) => seen.headers['accept-encoding'])).toEqual(['gzip, br', 'gzip, br']);
  });
});
