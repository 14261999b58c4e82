/**
 * A long-lived host on the default store (`npm run test:stress`): one runtime runs rounds of a 256-child
 * fan-out, every root disposed after its run, well past the point where the store's retention budget
 * (64 MiB of finished trees) is full. The parent's heap after a forced GC must stay within the budget
 * and stop growing once the budget is full.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/defaults.js';
import type { Brood } from '../../src/index.js';
import { createBrood, defineTool, scriptedModels, subagentTool } from '../../src/index.js';
import { route } from '../support/route.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const N = 256;
const MB = 1024 * 1024;
let brood: Brood | undefined;
afterAll(async () => brood?.close());

it('the default store: heap stays within its retention budget and flat once the budget is full', async () => {
  brood = createBrood({
    runner: 'worker',
    pool: { threads: 2 },
    maxParallelToolCalls: N,
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'root',
            turns: [
              {
                toolCalls: Array.from({ length: N }, (_, i) => ({
                  name: 'subagent',
                  arguments: { description: `c${i}`, prompt: `child ${i}` },
                })),
              },
              { text: 'done' },
            ],
          },
          { match: 'child', turns: [{ toolCalls: [{ name: 'noop', arguments: {} }] }, { text: 'child done' }] },
        ],
      }),
    ],
  });
  brood.tools.register(
    defineTool({
      name: 'noop',
      description: 'ok',
      parameters: { type: 'object', properties: {} },
      execute: () => 'ok',
    }),
  );
  brood.use(subagentTool({ provider: 'spawn' }));
  const round = async () => {
    const agent = await brood!.createAgent({ model: route });
    expect((await agent.run('root')).stopReason).toBe('completed');
    await agent.dispose();
  };

  const baseline = heapAfterGc();
  // ~2.5 KB of estimated session data per child: 40,960 children fill the 64 MiB budget.
  for (let i = 0; i < 160; i++) await round();
  const full = heapAfterGc();
  for (let i = 0; i < 120; i++) await round();
  const end = heapAfterGc();
  console.log(
    `memory soak: heap ${(baseline / MB).toFixed(1)} → ${(full / MB).toFixed(1)} (budget full) → ${(end / MB).toFixed(1)} MB after ${280 * N} children`,
  );
  const budget = DEFAULTS.memorySessions.retainBytes;
  expect(full - baseline).toBeLessThan(budget * 1.5);
  // 30,720 more children once the budget is full: growth ≤ 0.1 MB per 1,000 children.
  expect(end - full).toBeLessThan(0.1 * MB * 30.72);
});
