/** Budgets combine down the tree only ever tighter, and the watch names the first budget spent. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type BudgetExceeded, BudgetWatch, budgetDiagnostic, tighten } from '../../../src/scheduler/budget.js';

describe('tighten', () => {
  it('takes the smaller of each value and keeps values only one side sets', () => {
    expect(tighten({ timeoutMs: 60_000, maxTokens: 10 }, { timeoutMs: 300, idleTimeoutMs: 50 })).toEqual({
      timeoutMs: 300,
      idleTimeoutMs: 50,
      maxTokens: 10,
    });
  });

  it('is undefined when no side sets anything', () => {
    expect(tighten(undefined, {})).toBeUndefined();
  });
});

describe('BudgetWatch', () => {
  let clock = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    clock = 0;
  });
  afterEach(() => vi.useRealTimers());
  const now = () => clock;
  const advance = (ms: number) => {
    clock += ms;
    vi.advanceTimersByTime(ms);
  };

  it('spends tokens once the running total reaches maxTokens, and only once', () => {
    const spent: BudgetExceeded[] = [];
    const watch = new BudgetWatch({ maxTokens: 100 }, now, (what) => spent.push(what));
    watch.tokens(60);
    expect(watch.remainder()).toEqual({ maxTokens: 40 });
    watch.tokens(120);
    watch.tokens(130);
    expect(spent).toEqual([{ budget: 'tokens', limit: 100, used: 120 }]);
    expect(budgetDiagnostic(spent[0] as BudgetExceeded)).toBe(
      'the run hit its budget (tokens): used 120 tokens of 100 tokens (maxTokens)',
    );
  });

  it('restarts the idle clock on activity and spends idle only after a quiet stretch', () => {
    const spent: BudgetExceeded[] = [];
    const watch = new BudgetWatch({ idleTimeoutMs: 100 }, now, (what) => spent.push(what));
    advance(80);
    watch.activity();
    advance(80);
    expect(spent).toEqual([]);
    advance(20);
    expect(spent).toEqual([{ budget: 'idle', limit: 100, used: 100 }]);
    watch.stop();
  });

  it("gives a child the wall time its parent's run has left", () => {
    const watch = new BudgetWatch({ timeoutMs: 1_000 }, now, () => undefined);
    advance(400);
    expect(watch.remainder()).toEqual({ timeoutMs: 600 });
    watch.stop();
  });
});
