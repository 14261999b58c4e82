/**
 * Global setup of the `queue-behaviour` project: the delegation and subagent behaviour suites run a
 * second time with every driver on `brood host` processes. One Redis and two hosts serve the whole
 * project; the suites' helpers read the URL with inject('broodQueueRedis') (behaviourRunner in test/support/runtime.ts).
 * The hosts list the suites' adapter modules in their --config (a host loads no code named in Redis).
 */
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

const HOST_CONFIG = fileURLToPath(new URL('./fixtures/behaviour-host.json', import.meta.url));

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!redisAvailable()) return undefined;
  const redis = await RedisServer.start();
  const hosts: HostProcess[] = await Promise.all(
    [0, 1].map(() => startHost(redis.url, ['--queue', 'behaviour', '--concurrency', '256', '--config', HOST_CONFIG])),
  );
  project.provide('broodQueueRedis', redis.url);
  return async () => {
    await Promise.all(hosts.map((host) => stopHost(host)));
    await redis.dispose();
  };
}
