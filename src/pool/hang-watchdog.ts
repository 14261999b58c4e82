/**
 * The pool's hang watchdog. While drivers run, it reads every busy thread's heartbeat (the watch
 * board's counter, which a thread whose event loop turns moves every 50 ms) each fifth of the timeout,
 * and reports a thread whose heartbeat has not moved for more than the timeout (the SilenceJudge
 * rule): a driver is spinning synchronously there. Its checks run on an injected clock, so the rule
 * and its pace are tested on fake time; the runner decides what a hung thread costs.
 */
import type { Clock } from '../clock.js';
import { SilenceJudge } from '../wire/silence.js';

/** Checks at least this far apart, however short the timeout. */
const MIN_CHECK_MS = 20;

export interface HangWatchdogOptions {
  timeoutMs: number;
  clock: Clock;
  /** Each busy thread with its heartbeat counter now. */
  heartbeats: () => Iterable<readonly [threadId: number, beat: number]>;
  /** A thread's heartbeat has not moved for more than the timeout. */
  hung: (threadId: number) => void;
}

export class HangWatchdog {
  private readonly silence: SilenceJudge<number>;
  private readonly checkEveryMs: number;
  private cancelNext: (() => void) | undefined;

  constructor(private readonly options: HangWatchdogOptions) {
    this.silence = new SilenceJudge(options.timeoutMs);
    this.checkEveryMs = Math.max(MIN_CHECK_MS, Math.floor(options.timeoutMs / 5));
  }

  get watching(): boolean {
    return this.cancelNext !== undefined;
  }

  /** Starts checking (nothing when it already is). */
  start(): void {
    if (!this.watching) this.armNext();
  }

  /** Stops checking and forgets every heartbeat heard: a thread watched again starts afresh. */
  stop(): void {
    this.cancelNext?.();
    this.cancelNext = undefined;
    this.silence.clear();
  }

  private armNext(): void {
    this.cancelNext = this.options.clock.setTimeout(() => {
      // Armed before the check, so a check that ends the last activation (stop()) cancels it.
      this.armNext();
      this.check();
    }, this.checkEveryMs);
  }

  private check(): void {
    for (const threadId of this.silence.judge(this.options.heartbeats(), this.options.clock.now()))
      this.options.hung(threadId);
  }
}
