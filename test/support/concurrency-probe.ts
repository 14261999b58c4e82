/** Counts tool bodies running at once, for the SPEC §7.2 pool suites. */
import { pause } from './deferred.js';

/**
 * Tracks how many tool bodies run at once. `enter` resolves once `group` bodies are inside (or after
 * `graceMs`, so a scheduler that serializes fails the overlap assertion instead of hanging).
 */
export class ConcurrencyProbe {
  running = 0;
  max = 0;
  readonly timeline: string[] = [];
  private arrivals: (() => void)[] = [];

  async enter(label: string, group = 1, graceMs = 150): Promise<void> {
    this.running += 1;
    this.max = Math.max(this.max, this.running);
    this.timeline.push(`start:${label}`);
    if (group <= 1) return;
    const all = new Promise<void>((resolve) => this.arrivals.push(resolve));
    if (this.running >= group) {
      for (const arrive of this.arrivals) arrive();
      this.arrivals = [];
    }
    await Promise.race([all, pause(graceMs)]);
  }

  leave(label: string): void {
    this.running -= 1;
    this.timeline.push(`end:${label}`);
  }
}
