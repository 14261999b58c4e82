/**
 * `brood host` against a real redis-server whose setup fails after the connection itself succeeded:
 * a database index the server does not have (ioredis only logs the refused SELECT and would serve on
 * database 0). Exit 1 with QUEUE_UNAVAILABLE on stderr and no ready line; a database it has is fine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/run-cli.js';
import { RedisServer, redisAvailable, spawnHost, startHost, stopHost } from './redis-harness.js';

describe.runIf(redisAvailable())('brood host: Redis setup', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    assertBuilt();
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.dispose();
  });

  it('a database index Redis does not have (/99): exit 1, QUEUE_UNAVAILABLE on stderr, no ready line', async () => {
    const host = spawnHost(`${redis.url}/99`);
    expect(await host.exited).toBe(1);
    expect(host.stderr()).toMatch(/\[QUEUE_UNAVAILABLE\]$/m);
    expect(host.stderr()).not.toMatch(/brood host ready/);
  });

  it('a database it has (/1): ready, and a SIGTERM right after the ready line stops it cleanly (exit 0)', async () => {
    const host = await startHost(`${redis.url}/1`);
    await stopHost(host);
    expect(await host.exited).toBe(0);
    expect(host.stderr()).not.toMatch(/QUEUE_UNAVAILABLE|Redis:/);
  });
});
