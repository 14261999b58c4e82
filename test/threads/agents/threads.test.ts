/** SPEC §6 (model/request.threadId), §10.1: drivers run on pool threads; tools run on the main thread. */
import { isMainThread, threadId } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { defineTool, scriptedModels } from '../../../src/index.js';
import { eventsOf, ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { makeBrood } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

describe("runner: 'worker'", () => {
  it('drives the agent on a pool thread while tool bodies run on the main thread', async () => {
    brood = makeBrood('worker', {
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            { match: 'where', turns: [{ toolCalls: [{ name: 'where', arguments: {} }] }, { text: '{{results}}' }] },
          ],
        }),
      ],
    });
    const observed: { main: boolean; thread: number }[] = [];
    brood.tools.register(
      defineTool({
        name: 'where',
        description: 'reports the thread it runs on',
        parameters: { type: 'object', properties: {} },
        execute: () => {
          observed.push({ main: isMainThread, thread: threadId });
          return 'here';
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('where do you run?');

    expect(result).toMatchObject({ stopReason: 'completed', output: 'here' });
    expect(observed).toEqual([{ main: true, thread: threadId }]);
    const requests = ofType(await eventsOf(brood, agent.id), 'model/request');
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(typeof request.data.threadId).toBe('number');
      expect(request.data.threadId).not.toBe(threadId);
    }
  });

  it("under runner 'inline' the driver runs on the main thread (the contrast that makes the test above meaningful)", async () => {
    brood = makeBrood('inline');
    const agent = await brood.createAgent({ model: route });
    await agent.run('hello');
    const [request] = ofType(await eventsOf(brood, agent.id), 'model/request');
    expect(request?.data.threadId).toBe(threadId);
  });
});
