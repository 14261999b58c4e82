/**
 * One side's watch over its peers across Redis — the queue runner over its hosts, a `brood host` over
 * each parent — looked at every tick with the time of the tick: which peers have been silent for more
 * than the timeout (the SilenceJudge rule), and whether to beat to them (every quarter timeout, so a
 * peer hears this side while it has nothing else to say). A tick that comes more than `stallMs` after
 * the previous one means this process stalled (a long collection, a suspended machine): nobody is
 * judged on the silence that caused. Pure: the caller passes the time (an injected clock in tests).
 */
import { SilenceJudge } from './silence.js';

export class Heartbeat<K> {
  private readonly silence: SilenceJudge<K>;
  private lastTick: number | undefined;
  private lastBeat = Number.NEGATIVE_INFINITY;

  constructor(
    readonly timeoutMs: number,
    private readonly stallMs: number,
  ) {
    this.silence = new SilenceJudge(timeoutMs);
  }

  /** The peers listed, each with what is heard of it now; returns those silent for more than the timeout. */
  silent(heard: Iterable<readonly [K, unknown]>, now: number): K[] {
    const stalled = this.lastTick !== undefined && now - this.lastTick > this.stallMs;
    this.lastTick = now;
    if (stalled) this.silence.clear();
    return this.silence.judge(heard, now);
  }

  /** Whether a beat is due now (a quarter timeout since the last one); asking when it is counts as beating. */
  beatDue(now: number): boolean {
    if (now - this.lastBeat < this.timeoutMs / 4) return false;
    this.lastBeat = now;
    return true;
  }

  /** Forgets every peer heard and the last tick (the watch stopped, or a peer is news again). */
  clear(): void {
    this.silence.clear();
    this.lastTick = undefined;
  }
}
