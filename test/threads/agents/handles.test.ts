/**
 * SPEC §10.7: finished agents release everything (ports, listeners, timers). Its own file, so each
 * runner's baseline is taken in a fresh process and leftovers of other tests cannot pollute it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood } from '../../../src/index.js';
import { defineTool, scriptedModels } from '../../../src/index.js';
import { activeResources, waitOutRunnerTimer } from '../../support/active-resources.js';
import { pause } from '../../support/deferred.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('1,000 sequential short agents leave the same active resources as the first one', async () => {
    brood = makeBrood(runner, {
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'short', turns: [{ toolCalls: [{ name: 'noop', arguments: {} }] }, { text: 'bye' }] }],
        }),
      ],
    });
    brood.tools.register(
      defineTool({ name: 'noop', description: 'does nothing', parameters: z.object({}), execute: () => 'ok' }),
    );
    const b = brood;
    const once = async (): Promise<void> => {
      const agent = await b.createAgent({ model: route });
      const result = await agent.run('short life');
      if (result.stopReason !== 'completed') throw new Error(`unexpected stop ${result.stopReason}`);
      await agent.whenIdle();
      await agent.dispose();
    };
    await waitOutRunnerTimer();
    await once();
    // Pool threads start with the first run (one per core) and hold a ref'd port while they boot; the
    // first agent needed only the first of them: wait for the others (no agent exists any more).
    for (let i = 0; i < 400 && process.getActiveResourcesInfo().includes('MessagePort'); i += 1) await pause(5);
    const baseline = await activeResources();
    for (let i = 1; i < 1_000; i += 1) await once();
    const after = await activeResources();

    expect(after).toEqual(baseline);
    expect(await brood.sessions.list()).toHaveLength(1_000);
  });
});
