/**
 * Content parts on the queue runner: a top-level agent whose driver runs in a `brood host` process
 * gets its message's image over Redis (the claim), and again in the plan's history on its next turn.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Brood, createBrood } from '../../src/brood.js';
import { scriptedModels } from '../../src/models/scripted.js';
import { queueRunner } from '../../src/queue/config.js';
import { route } from '../support/route.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe.runIf(redisAvailable())('content parts over Redis', () => {
  let redis: RedisServer;
  let host: HostProcess;
  let brood: Brood | undefined;

  beforeAll(async () => {
    redis = await RedisServer.start();
    host = await startHost(redis.url);
  });
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
  });
  afterAll(async () => {
    await stopHost(host);
    await redis?.dispose();
  });

  it("a host's driver is shown the image of the message it claimed, and of the history on the next turn", async () => {
    brood = createBrood({
      runner: queueRunner({ connection: redis.url }),
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'chart', turns: [{ text: 'shown: {{media}}' }, { text: 'still shown: {{media}}' }] }],
        }),
      ],
    });
    const agent = await brood.createAgent({ model: route });
    const first = await agent.run([
      { type: 'text', text: 'the chart' },
      { type: 'image', data: PNG, mediaType: 'image/png' },
    ]);
    expect(first.output).toBe('shown: image image/png (8 bytes)');
    const second = await agent.run('again');
    expect(second.output).toBe('still shown: image image/png (8 bytes)');
    const requests = (await brood.sessions.read(agent.id)).events.filter((event) => event.type === 'model/request');
    expect(
      requests.every((request) => (request.data.host as { pid?: number } | undefined)?.pid === host.child.pid),
    ).toBe(true);
  });
});
