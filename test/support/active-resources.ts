/**
 * SPEC §10.7's measure: process.getActiveResourcesInfo() counts by kind, once idle and after one
 * macrotask, for tests that compare them before and after many agents or delegations.
 */
import { setImmediate as macrotask, setTimeout as sleep } from 'node:timers/promises';

/** Resource kinds and counts from process.getActiveResourcesInfo(), taken after one macrotask. */
export async function activeResources(): Promise<Record<string, number>> {
  await macrotask();
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/**
 * Waits out the test runner's own timer, so that resource counts are brood's only. Vitest reports task
 * updates through a 100 ms throttle timer armed when a test starts; a first agent that ends within that
 * window (a fast machine) put the runner's Timeout into the baseline, and every later snapshot lacked
 * it. Call before the baseline's work. Timers fire in expiry order, so once this one has fired the
 * runner's has too; nothing re-arms it until the test reports again.
 */
export async function waitOutRunnerTimer(): Promise<void> {
  await sleep(150);
}
