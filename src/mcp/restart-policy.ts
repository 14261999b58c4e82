/**
 * When a lost MCP server is tried again: 0.5 s after the loss, doubling up to 30 s, at most 5 attempts
 * in a row; after that only a call makes an attempt. A row ends only when a connection has stayed up
 * for 30 s, so a server that dies right after every start cannot make brood restart it forever.
 */
export const RESTART = {
  firstDelayMs: 500,
  maxDelayMs: 30_000,
  attemptsInARow: 5,
  /** A connection that lived this long ends the row of attempts. */
  stableMs: 30_000,
} as const;

export class RestartPolicy {
  #attemptsInARow = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** An attempt to connect starts (on a timer, or made by a call). */
  attempt(): void {
    this.#attemptsInARow += 1;
  }

  /** After a loss or a failed attempt: the wait before the next attempt, or undefined when none is made on its own. */
  nextDelay(): number | undefined {
    if (this.#attemptsInARow >= RESTART.attemptsInARow) return undefined;
    return Math.min(RESTART.firstDelayMs * 2 ** this.#attemptsInARow, RESTART.maxDelayMs);
  }

  /** A connection made at `connectedAt` (this policy's clock) was lost: a long enough life ends the row. */
  lost(connectedAt: number): void {
    if (this.now() - connectedAt >= RESTART.stableMs) this.#attemptsInARow = 0;
  }

  /** The policy's clock, for stamping connections. */
  get time(): number {
    return this.now();
  }
}
