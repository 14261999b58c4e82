/**
 * Stress sizes of test/reliability/leaks-load.test.ts: 10,000 sequential and 1,000 concurrent short
 * delegations from eight parents. Run with `npm run test:stress`.
 */
import { afterAll, expect, it } from 'vitest';
import { type LoadRig, loadRig, runLoad } from '../support/load-harness.js';

let rig: LoadRig | undefined;
afterAll(async () => {
  await rig?.brood.close();
});

it('10,000 sequential + 1,000 concurrent delegations: resources return to their first-delegation value, heap bounded', async () => {
  rig = await loadRig(8);
  const report = await runLoad(rig, 10_000, 1_000);
  console.log(
    `stress: ${report.seqPerSecond.toFixed(0)} sequential delegations/s, ${report.concPerSecond.toFixed(0)} concurrent delegations/s, ` +
      `heap growth ${report.heapGrowthPerDelegation.toFixed(0)} B/delegation, resources ${JSON.stringify(report.afterConcurrent)}`,
  );
  expect(report.ends).toBe(11_000);
  expect(report.afterSequential).toEqual(report.baseline);
  expect(report.afterConcurrent).toEqual(report.baseline);
  expect(report.heapGrowthPerDelegation).toBeLessThan(1_024);
});
