/**
 * A token bucket on an injected clock: `level` refills at `ratePerMs` up to `capacity` and may go
 * negative when usage reported after the fact exceeds what was taken (the debt is paid by waiting).
 */
export class TokenBucket {
  private level: number;
  private stamp: number;

  constructor(
    private readonly capacity: number,
    private readonly ratePerMs: number,
    now: number,
  ) {
    this.level = capacity;
    this.stamp = now;
  }

  private refill(now: number): void {
    if (now > this.stamp) this.level = Math.min(this.capacity, this.level + (now - this.stamp) * this.ratePerMs);
    this.stamp = Math.max(this.stamp, now);
  }

  /**
   * Whether `cost` may be taken now. A cost above the capacity is let through once the bucket is
   * full (it could never be otherwise) and leaves the bucket in debt.
   */
  canTake(cost: number, now: number): boolean {
    this.refill(now);
    return this.level >= Math.min(cost, this.capacity);
  }

  take(cost: number, now: number): void {
    this.refill(now);
    this.level -= cost;
  }

  /** A correction after the fact: positive when more was used than taken, negative to give back. */
  adjust(delta: number, now: number): void {
    this.refill(now);
    this.level = Math.min(this.capacity, this.level - delta);
  }

  /** When `cost` can next be taken (now when it already can). */
  readyAt(cost: number, now: number): number {
    this.refill(now);
    const missing = Math.min(cost, this.capacity) - this.level;
    return missing <= 0 ? now : now + Math.ceil(missing / this.ratePerMs);
  }
}

/**
 * Requests per minute with no burst: one request per `60_000 / rpm` ms. Providers enforce per-second
 * or finer windows, so letting a minute's worth through at once would be refused.
 */
export function requestBucket(requestsPerMinute: number, now: number): TokenBucket {
  return new TokenBucket(1, requestsPerMinute / 60_000, now);
}

/** Tokens per minute, with up to one second's worth at once. */
export function tokenBucket(tokensPerMinute: number, now: number): TokenBucket {
  return new TokenBucket(Math.max(1, tokensPerMinute / 60), tokensPerMinute / 60_000, now);
}
