/**
 * An activation whose driver task is not posted yet: the parent claims the first message (writing
 * `turn/start` durably) before it sends the plan, so the driver starts its first turn without a
 * round trip. Cancellation asked for in between is forwarded once the real activation exists.
 */
import type { Activation, ActivationEnd } from '../wire/runner.js';

export class PendingActivation implements Activation {
  readonly done: Promise<ActivationEnd>;
  private resolveDone!: (end: ActivationEnd) => void;
  private real: Activation | undefined;
  private cancelled: { turn?: number } | undefined;

  constructor() {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  attach(real: Activation): void {
    this.real = real;
    if (this.cancelled) real.cancel(this.cancelled.turn);
    void real.done.then(this.resolveDone);
  }

  /** Ends without a driver (nothing was left to claim, or the claim failed). */
  finish(end: ActivationEnd): void {
    this.resolveDone(end);
  }

  cancel(turn?: number): void {
    if (this.real) this.real.cancel(turn);
    else this.cancelled = turn === undefined ? {} : { turn };
  }

  forceStop(reason: string): void {
    this.real?.forceStop(reason);
  }
}
