/**
 * Leaks and load (SPEC §10.7) at CI sizes: 1,000 sequential and 200 concurrent short delegations from
 * four parents. Once idle (after one macrotask) process.getActiveResourcesInfo() counts — MessagePorts
 * included — equal their value after the first delegation; heap growth per delegation after a full GC
 * stays bounded, with the session store's data excluded; throughput is reported.
 */
import { afterAll, expect, it } from 'vitest';
import { type LoadRig, loadRig, runLoad } from '../../support/load-harness.js';

let rig: LoadRig | undefined;
afterAll(async () => {
  await rig?.brood.close();
});

/** Generous for GC noise, far below what a retained child (agent, registries, history, port) costs. */
const MAX_HEAP_BYTES_PER_DELEGATION = 2_048;

it('1,000 sequential + 200 concurrent delegations: resources return to their first-delegation value, heap bounded', async () => {
  rig = await loadRig(4);
  const report = await runLoad(rig, 1_000, 200);
  console.log(
    `leaks/load: ${report.seqPerSecond.toFixed(0)} sequential delegations/s, ${report.concPerSecond.toFixed(0)} concurrent delegations/s, ` +
      `heap growth ${report.heapGrowthPerDelegation.toFixed(0)} B/delegation, resources after the first ${JSON.stringify(report.baseline)}, ` +
      `after the sequential ${JSON.stringify(report.afterSequential)}, after the concurrent ${JSON.stringify(report.afterConcurrent)}`,
  );
  expect(report.ends).toBe(1_200);
  expect(report.afterSequential).toEqual(report.baseline);
  expect(report.afterConcurrent).toEqual(report.baseline);
  expect(report.afterConcurrent.MessagePort ?? 0).toBe(report.baseline.MessagePort ?? 0);
  expect(report.heapGrowthPerDelegation).toBeLessThan(MAX_HEAP_BYTES_PER_DELEGATION);
  // Children are released: only the parents remain as live agents' sessions in memory... and the store kept headers only.
  expect(rig.store.headers.size).toBe(4 + 1_200);
  expect(rig.store.events).toBeGreaterThan(1_200 * 4);
}, 120_000);
