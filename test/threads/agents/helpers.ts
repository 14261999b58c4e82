/**
 * Helpers for the runtime integration tests: a session store that tells the test when events land
 * (so tests synchronize on promises instead of sleeping), event filters, and error-code probes.
 */
import { createBrood } from '../../../src/index.js';
import type { Brood, BroodOptions, SessionEvent } from '../../../src/index.js';

export type RunnerKind = 'worker' | 'inline';
export const RUNNERS: RunnerKind[] = ['worker', 'inline'];

export { tapStore, type TappedStore } from '../../support/tap-store.js';
export { activeResources, waitOutRunnerTimer } from '../../support/active-resources.js';

export function makeBrood(runner: RunnerKind, options: BroodOptions = {}): Brood {
  return createBrood({ runner, pool: { threads: 2 }, ...options });
}

export const route = { provider: 'scripted', model: 'scripted' } as const;

export async function eventsOf(brood: Brood, id: string): Promise<SessionEvent[]> {
  return (await brood.sessions.read(id)).events;
}

export function ofType(events: SessionEvent[], type: string): SessionEvent[] {
  return events.filter((event) => event.type === type);
}

/** The events of one turn, from its `turn/start` to its `turn/end` (inclusive). */
export function turnEvents(events: SessionEvent[], turn: number): SessionEvent[] {
  const start = events.findIndex((e) => e.type === 'turn/start' && e.data.turn === turn);
  const end = events.findIndex((e) => e.type === 'turn/end' && e.data.turn === turn);
  if (start < 0 || end < 0) throw new Error(`turn ${turn} is not complete in the log`);
  return events.slice(start, end + 1);
}

/** The code a promise rejected with, or 'RESOLVED'. */
export async function rejectionCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  return 'RESOLVED';
}

export { thrownCode } from '../../support/codes.js';

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A short wait (tests only ever wait a few ms, to let other calls join a rendezvous). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

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
