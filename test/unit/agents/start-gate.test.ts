/**
 * The parent starts a tool batch's calls a few per turn of its event loop (src/agents/start-gate.ts):
 * as many more per turn as turns stay within the budget, so a wide batch's children leave in few
 * messages, and never more than two per turn while each start alone is long. Time is a fake clock that
 * each start advances by its cost.
 */
import { afterEach, expect, it } from 'vitest';
import { StartGate, TURN_BUDGET_MS } from '../../../src/agents/start-gate.js';

let ticking = false;
afterEach(() => {
  ticking = false;
});

/** Starts `calls` calls of `costMs` each through one gate; resolves to how many started in each turn of the loop. */
async function startsPerTurn(calls: number, costMs: number): Promise<number[]> {
  let clock = 0;
  const gate = new StartGate(() => clock);
  let turn = 0;
  ticking = true;
  const tick = (): void => {
    turn += 1;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const turnOf: number[] = [];
  await Promise.all(
    Array.from({ length: calls }, () =>
      gate.run(async () => {
        clock += costMs;
        turnOf.push(turn);
      }),
    ),
  );
  const counts = new Map<number, number>();
  for (const t of turnOf) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts.values()];
}

it('cheap starts: a 1,000-call batch starts in a few dozen turns, none over twice the budget', async () => {
  const costMs = 0.1;
  const perTurn = await startsPerTurn(1000, costMs);
  expect(perTurn.reduce((sum, n) => sum + n, 0)).toBe(1000);
  expect(perTurn.length).toBeLessThan(40); // two per turn would take 500
  expect(Math.max(...perTurn) * costMs).toBeLessThanOrEqual(2 * TURN_BUDGET_MS);
});

it('starts that each take longer than half the budget: two per turn, as many turns as that takes', async () => {
  const perTurn = await startsPerTurn(40, TURN_BUDGET_MS);
  expect(perTurn.length).toBe(20);
  expect(Math.max(...perTurn)).toBe(2);
});
