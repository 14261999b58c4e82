/**
 * The tokens of one budgeted turn, shared down its subtree. Every response of the turn, and of every
 * child started from it (foreground, background or continuable), is charged to the account of the
 * turn that made it and to each account above. Siblings running in parallel therefore spend one
 * remainder, not each a copy of it: when an account reaches its limit, every account below it is
 * spent too, so the whole subtree stops before its next request. What can still overrun the limit is
 * bounded by the responses of the requests already in flight at that moment.
 */
export interface TokensSpent {
  limit: number;
  used: number;
}

export class TokenAccount {
  private used = 0;
  private spentBy: TokensSpent | undefined;
  private listener: ((spent: TokensSpent) => void) | undefined;
  private closed = false;
  /** Open accounts of the turns started from this one (and closed ones that still have some). */
  private readonly below = new Set<TokenAccount>();

  constructor(
    /** This turn's own token limit (undefined: only the accounts above limit it). */
    private readonly limit: number | undefined,
    private readonly above: TokenAccount | undefined,
  ) {
    above?.below.add(this);
  }

  /**
   * Tells `listener` once, when this account or one above it is spent (at once when one already is:
   * a child started after its parent's budget ran out makes no request).
   */
  watch(listener: (spent: TokensSpent) => void): void {
    this.listener = listener;
    const spent = this.spentAbove();
    if (spent !== undefined) this.exhaust(spent);
  }

  /** A response of this turn reported `tokens`: every account up the tree is charged. */
  charge(tokens: number): void {
    if (!(tokens > 0)) return;
    for (let account: TokenAccount | undefined = this; account !== undefined; account = account.above) {
      account.used += tokens;
      if (account.limit !== undefined && account.used >= account.limit)
        account.exhaust({ limit: account.limit, used: account.used });
    }
  }

  /** What is left of the tightest account from here up (undefined: no account limits tokens). */
  left(): number | undefined {
    let left: number | undefined;
    for (let account: TokenAccount | undefined = this; account !== undefined; account = account.above) {
      if (account.limit !== undefined) left = Math.min(left ?? Number.POSITIVE_INFINITY, account.limit - account.used);
    }
    return left;
  }

  /**
   * The turn ended: nobody is told any more. The account stays in the tree (still charged and still
   * spending the accounts below) while children started from the turn keep running.
   */
  close(): void {
    this.listener = undefined;
    this.closed = true;
    this.release();
  }

  private release(): void {
    if (!this.closed || this.below.size > 0 || this.above === undefined) return;
    this.above.below.delete(this);
    this.above.release();
  }

  private spentAbove(): TokensSpent | undefined {
    for (let account = this.above; account !== undefined; account = account.above) {
      if (account.spentBy !== undefined) return account.spentBy;
    }
    return undefined;
  }

  /** Spent: told once; the accounts below (some may have joined since) are spent with it. */
  private exhaust(spent: TokensSpent): void {
    if (this.spentBy === undefined) {
      this.spentBy = spent;
      this.listener?.(spent);
    }
    for (const account of this.below) account.exhaust(spent);
  }
}
