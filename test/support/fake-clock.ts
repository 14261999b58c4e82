/**
 * A clock (src/clock.ts) that moves only when the test moves it: its timers fire in time order as
 * `advance` passes them, each seeing `now()` at its own due time. Disposable: `using clock = new
 * FakeClock()` drops whatever is still pending when the test ends, so nothing fires into the next.
 */
import type { Clock } from '../../src/clock.js';

interface PendingTimer {
  readonly at: number;
  readonly callback: () => void;
}

export class FakeClock implements Clock, Disposable {
  private time: number;
  private pending: PendingTimer[] = [];

  constructor(start = 0) {
    this.time = start;
  }

  readonly now = (): number => this.time;

  readonly setTimeout = (callback: () => void, ms: number): (() => void) => {
    const timer = { at: this.time + Math.max(0, ms), callback };
    this.pending.push(timer);
    return () => {
      this.pending = this.pending.filter((candidate) => candidate !== timer);
    };
  };

  /** Timers not yet fired nor cancelled. */
  get timers(): number {
    return this.pending.length;
  }

  /** Moves time on by `ms`, firing every timer due by then (including ones those callbacks set). */
  advance(ms: number): void {
    const until = this.time + ms;
    for (let next = this.nextDue(until); next !== undefined; next = this.nextDue(until)) {
      this.pending = this.pending.filter((candidate) => candidate !== next);
      this.time = next.at;
      next.callback();
    }
    this.time = until;
  }

  [Symbol.dispose](): void {
    this.pending = [];
  }

  private nextDue(until: number): PendingTimer | undefined {
    // Pending timers are kept in the order they were set: of those due at once, the first set fires first.
    let next: PendingTimer | undefined;
    for (const timer of this.pending) if (timer.at <= until && (next === undefined || timer.at < next.at)) next = timer;
    return next;
  }
}
