/**
 * The Redis channel's sequencing against a real Redis: a lost batch is reported, a resent one dropped,
 * a forged one costs at most one report; with a secret, unsealed or tampered batches are dropped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Channel } from '../../src/queue/channel.js';
import { channelKey, createClient, disconnect, type RedisClient } from '../../src/queue/redis.js';
import { until } from '../support/until.js';
import { RedisServer, redisAvailable } from './redis-harness.js';

describe.runIf(redisAvailable())('Redis channel', () => {
  let redis: RedisServer;
  const clients: RedisClient[] = [];
  const client = async (): Promise<RedisClient> => {
    const made = await createClient(redis.url, { name: 'test', bounded: false });
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await Promise.all(clients.map((made) => disconnect(made)));
    await redis?.dispose();
  });

  it('delivers batches in order, reports a lost one, drops one delivered twice', async () => {
    const keyOf = (endpoint: string) => channelKey('t', 'q', endpoint);
    const silent = { batch: () => undefined, broken: () => undefined, malformed: () => undefined };
    const sender = new Channel('a', await client(), await client(), keyOf, 60_000, silent);
    for (const n of [1, 2, 3]) {
      sender.send('b', { n });
      await sender.flush();
    }
    const raw = await client();
    // Lose batch 2 (as a restarted Redis would) and deliver batch 3 twice (as a resent LPUSH would).
    const [third, second] = (await raw.lrange(keyOf('b'), 0, 1)) as [string, string];
    await raw.lrem(keyOf('b'), 1, second);
    await raw.lpush(keyOf('b'), third);
    const got: unknown[] = [];
    const broken: string[] = [];
    const malformed: string[] = [];
    const receiver = new Channel('b', await client(), await client(), keyOf, 60_000, {
      batch: (from, frames) => got.push(...frames.map((frame) => ({ from, frame }))),
      broken: (peer) => broken.push(peer),
      malformed: (reason) => malformed.push(reason),
    });
    receiver.start();
    await raw.lpush(keyOf('b'), 'not json');
    sender.send('b', { n: 4 });
    await sender.flush();
    await until(() => got.length >= 3);
    expect(got).toEqual([
      { from: 'a', frame: { n: 1 } },
      { from: 'a', frame: { n: 3 } },
      { from: 'a', frame: { n: 4 } },
    ]);
    expect(broken).toEqual(['a']);
    expect(malformed).toHaveLength(1);
    await receiver.close();
    await sender.close();
  });

  const keyOf = (endpoint: string) => channelKey('t', 'q', endpoint);
  const SECRET = 'a-secret-of-at-least-16-chars';

  /** A receiver that records what it delivers, reports and drops. */
  async function receiverOn(self: string, secret?: string) {
    const got: unknown[] = [];
    const broken: string[] = [];
    const lines: string[] = [];
    const channel = new Channel(
      self,
      await client(),
      await client(),
      keyOf,
      60_000,
      {
        batch: (_from, frames) => got.push(...frames),
        broken: (peer) => broken.push(peer),
        malformed: (line) => lines.push(line),
      },
      secret,
    );
    channel.start();
    return { channel, got, broken, lines };
  }

  const silent = { batch: () => undefined, broken: () => undefined, malformed: () => undefined };

  it('a forged batch with a high sequence number costs one report, not every later batch', async () => {
    const receiver = await receiverOn('forged-to');
    const sender = new Channel('host-1', await client(), await client(), keyOf, 60_000, silent);
    sender.send('forged-to', { n: 1 });
    await sender.flush();
    await until(() => receiver.got.length === 1);
    const raw = await client();
    // The 80-byte batch of the issue: the sender's name, a sequence number far ahead of its own.
    await raw.lpush(keyOf('forged-to'), JSON.stringify({ from: 'host-1', seq: 999_999_999, frames: [] }));
    for (const n of [2, 3, 4]) {
      sender.send('forged-to', { n });
      await sender.flush();
    }
    await until(() => receiver.got.length === 4);
    expect(receiver.got).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    expect(receiver.broken).toEqual(['host-1']);
    await receiver.channel.close();
    await sender.close();
  });

  it("a sender's sequence restarts with its hello: a new channel of the same name is heard from its first batch", async () => {
    const receiver = await receiverOn('restart-to');
    for (const generation of [1, 2]) {
      const sender = new Channel('parent-1', await client(), await client(), keyOf, 60_000, silent);
      sender.send('restart-to', { generation });
      await sender.flush();
      await sender.close();
    }
    await until(() => receiver.got.length === 2);
    expect(receiver.got).toEqual([{ generation: 1 }, { generation: 2 }]);
    expect(receiver.broken).toEqual([]);
    await receiver.channel.close();
  });

  it('with a secret: sealed batches pass; unsealed, tampered or wrongly keyed ones are dropped in one diagnostic line', async () => {
    const receiver = await receiverOn('sealed-to', SECRET);
    const sealed = new Channel('h-ok', await client(), await client(), keyOf, 60_000, silent, SECRET);
    const wrongKey = new Channel('h-bad', await client(), await client(), keyOf, 60_000, silent, `${SECRET}-other`);
    const unsealed = new Channel('h-none', await client(), await client(), keyOf, 60_000, silent);
    sealed.send('sealed-to', { from: 'ok', n: 1 });
    wrongKey.send('sealed-to', { from: 'bad' });
    unsealed.send('sealed-to', { from: 'none' });
    await Promise.all([sealed.flush(), wrongKey.flush(), unsealed.flush()]);
    const raw = await client();
    // A sealed batch of the right sender whose frames were changed in Redis.
    sealed.send('elsewhere', { n: 2 });
    await sealed.flush();
    const [copy] = (await raw.lrange(keyOf('elsewhere'), 0, 0)) as [string];
    await raw.lpush(keyOf('sealed-to'), copy.replace('"n":2', '"n":3'));
    await raw.lpush(keyOf('sealed-to'), copy); // sealed for another endpoint: not replayable here
    sealed.send('sealed-to', { from: 'ok', n: 4 });
    await sealed.flush();
    await until(() => receiver.got.length === 2 && receiver.lines.length === 1);
    expect(receiver.got).toEqual([
      { from: 'ok', n: 1 },
      { from: 'ok', n: 4 },
    ]);
    expect(receiver.channel.rejected).toBe(4);
    expect(receiver.lines).toHaveLength(1);
    expect(receiver.lines[0]).toMatch(/^4 batch\(es\) on sealed-to failed authentication/);
    expect(receiver.broken).toEqual([]);
    for (const channel of [receiver.channel, sealed, wrongKey, unsealed]) await channel.close();
  });
});
