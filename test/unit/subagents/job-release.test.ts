/**
 * Finished background jobs and their children are released once their owner is
 * disposed. 1,000 children with 50 KB of output each: after both owners are disposed the heap is back
 * within a few MB of its baseline (the store keeps no event data, so what stays is what leaked).
 */
import { afterEach, expect, it } from 'vitest';
import type { Agent, Brood } from '../../../src/index.js';
import { createBrood, scriptedModels } from '../../../src/index.js';
import { pluginAccess } from '../../../src/runtime/plugin-access.js';
import { CountingStore, heapUsed } from '../../support/load-harness.js';
import { route } from '../../support/route.js';

const OUTPUT = 50 * 1024;
const CHILDREN = 1_000;
let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

async function runJobs(owner: Agent, count: number): Promise<void> {
  const jobs = pluginAccess(brood!).jobs;
  const done: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const controller = new AbortController();
    const run = await brood!.subagents.start('spawn', {
      parent: owner,
      prompt: `job ${i}`,
      signal: controller.signal,
      label: `job ${i}`,
    });
    done.push(jobs.create(owner, run, `job ${i}`, controller).done);
  }
  await Promise.all(done);
  await owner.whenIdle(); // every job notice has woken the owner and been answered
}

it(`${CHILDREN} finished background children of two disposed owners leave the heap within a few MB of baseline`, async () => {
  brood = createBrood({
    runner: 'inline',
    sessions: new CountingStore(),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'job', turns: [{ text: `{{prompt}} ${'o'.repeat(OUTPUT)}` }] },
          { match: 'owner', turns: [] },
        ],
      }),
    ],
  });
  const warm = await brood.createAgent({ model: route });
  await runJobs(warm, 20);
  await warm.dispose();
  const baseline = heapUsed();
  const owners = [await brood.createAgent({ model: route }), await brood.createAgent({ model: route })];
  await Promise.all(owners.map((owner) => runJobs(owner, CHILDREN / 2)));
  const held = heapUsed();
  await Promise.all(owners.map((owner) => owner.dispose()));
  const after = heapUsed();
  const MB = 1024 * 1024;
  console.log(
    `job release: baseline ${(baseline / MB).toFixed(1)} MB, with ${CHILDREN} finished jobs ${(held / MB).toFixed(1)} MB, owners disposed ${(after / MB).toFixed(1)} MB`,
  );
  expect(held - baseline).toBeGreaterThan((CHILDREN * OUTPUT) / 2); // the outputs were really held while readable
  expect(after - baseline).toBeLessThan(5 * MB);
  expect((pluginAccess(brood).jobs as unknown as { size: number }).size).toBe(0);
});
