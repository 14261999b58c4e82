/** In the queue-behaviour project, the behaviour suites' helpers really place drivers on brood hosts. */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { route } from '../support/route.js';
import { harness } from '../threads/subagents/helpers.js';

describe.runIf(inject('broodQueueRedis') !== undefined)('queue-behaviour project', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it('runs the helpers’ drivers on a host (model/request names it)', async () => {
    const h = harness();
    close = () => h.brood.close();
    const agent = await h.brood.createAgent({ model: route });
    expect((await agent.run('hello')).stopReason).toBe('completed');
    const [request] = (await h.events(agent.id)).filter((event) => event.type === 'model/request');
    expect(request?.data.host).toMatchObject({ pid: expect.any(Number) });
  });
});
