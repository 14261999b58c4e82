/** The Redis channel's sequencing against a real Redis: a lost batch is reported, a resent one dropped. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Channel } from '../../src/queue/channel.js';
import { channelKey, createClient, disconnect, type RedisClient } from '../../src/queue/redis.js';
import { RedisServer, redisAvailable } from './redis-harness.js';
import { until } from '../support/until.js';

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
});
