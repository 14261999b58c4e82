/**
 * Global setup of the `queue-behaviour` project: the delegation and subagent behaviour suites run a
 * second time with every driver on `brood host` processes. One Redis and two hosts serve the whole
 * project; the suites' helpers read the URL with inject('broodQueueRedis') (behaviourRunner in test/support/runtime.ts).
 */
import type { TestProject } from 'vitest/node';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!redisAvailable()) return undefined;
  const redis = await RedisServer.start();
  const hosts: HostProcess[] = await Promise.all(
    [0, 1].map(() => startHost(redis.url, ['--queue', 'behaviour', '--concurrency', '256'])),
  );
  project.provide('broodQueueRedis', redis.url);
  return async () => {
    await Promise.all(hosts.map((host) => stopHost(host)));
    await redis.dispose();
  };
}
