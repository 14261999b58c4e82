/** One token account per budgeted turn, shared down its subtree (src/scheduler/token-account.ts). */
import { describe, expect, it } from 'vitest';
import { TokenAccount, type TokensSpent } from '../../../src/scheduler/token-account.js';

function watched(limit: number | undefined, above?: TokenAccount): { account: TokenAccount; told: TokensSpent[] } {
  const account = new TokenAccount(limit, above);
  const told: TokensSpent[] = [];
  account.watch((spent) => told.push(spent));
  return { account, told };
}

describe('TokenAccount', () => {
  it('charges every account up the tree, so siblings spend one remainder', () => {
    const parent = watched(100);
    const a = watched(undefined, parent.account);
    const b = watched(undefined, parent.account);
    a.account.charge(60);
    expect(b.account.left()).toBe(40);
    b.account.charge(40);
    expect(parent.told).toEqual([{ limit: 100, used: 100 }]);
    // Both children are told, including the one whose own responses did not cross the limit.
    expect(a.told).toEqual([{ limit: 100, used: 100 }]);
    expect(b.told).toEqual([{ limit: 100, used: 100 }]);
  });

  it('tells each account once, and an account that joins a spent tree at once', () => {
    const parent = watched(10);
    parent.account.charge(10);
    parent.account.charge(5);
    expect(parent.told).toHaveLength(1);
    const late = watched(undefined, parent.account);
    expect(late.told).toEqual([{ limit: 10, used: 10 }]);
  });

  it('keeps a closed account in the tree: its running children still spend it and are stopped by it', () => {
    const parent = watched(50);
    const child = watched(undefined, parent.account);
    parent.account.close();
    child.account.charge(50);
    expect(parent.told).toEqual([]);
    expect(child.told).toEqual([{ limit: 50, used: 50 }]);
  });

  it('leaves the tightest limit on the way up as what is left, and nothing when none limits tokens', () => {
    const top = watched(1_000);
    const middle = watched(100, top.account);
    middle.account.charge(30);
    expect(watched(undefined, middle.account).account.left()).toBe(70);
    expect(watched(undefined).account.left()).toBeUndefined();
  });
});
