/**
 * The pool's hang watchdog (src/pool/hang-watchdog.ts) on fake time: when a busy thread whose heartbeat
 * stopped is reported, what keeps one alive, and that a stopped watchdog leaves no timer behind. A real
 * spinning driver on a real thread is test/threads/pool/faults-independent.test.ts ('hang').
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HangWatchdog } from '../../../src/pool/hang-watchdog.js';
import { FakeClock } from '../../support/fake-clock.js';

const TIMEOUT_MS = 1_000;
/** The watchdog checks every fifth of the timeout. */
const CHECK_MS = TIMEOUT_MS / 5;

let clock = new FakeClock();
afterEach(() => {
  clock[Symbol.dispose]();
  clock = new FakeClock();
});

/** A watchdog over threads whose heartbeats the test sets, and the threads it reported hung. */
function watch(beats: Map<number, number>) {
  const hung: number[] = [];
  const watchdog = new HangWatchdog({
    timeoutMs: TIMEOUT_MS,
    clock,
    heartbeats: () => beats.entries(),
    hung: (threadId) => hung.push(threadId),
  });
  return { watchdog, hung };
}

describe('hang watchdog', () => {
  it('a busy thread whose heartbeat stops is reported hung once the timeout has passed, not before', () => {
    const { watchdog, hung } = watch(new Map([[7, 0]]));
    watchdog.start();
    clock.advance(CHECK_MS); // first heard
    clock.advance(TIMEOUT_MS);
    expect(hung).toEqual([]);
    clock.advance(CHECK_MS);
    expect(hung).toEqual([7]);
  });

  it('a thread whose heartbeat keeps moving is never reported, however long its driver runs', () => {
    const beats = new Map([[7, 0]]);
    const { watchdog, hung } = watch(beats);
    watchdog.start();
    for (let elapsed = 0; elapsed < TIMEOUT_MS * 20; elapsed += CHECK_MS) {
      beats.set(7, elapsed);
      clock.advance(CHECK_MS);
    }
    expect(hung).toEqual([]);
  });

  it('judges each thread on its own: only the silent one is reported', () => {
    const beats = new Map([
      [1, 0],
      [2, 0],
    ]);
    const { watchdog, hung } = watch(beats);
    watchdog.start();
    for (let elapsed = 0; elapsed <= TIMEOUT_MS + CHECK_MS * 2; elapsed += CHECK_MS) {
      beats.set(2, elapsed);
      clock.advance(CHECK_MS);
    }
    expect(new Set(hung)).toEqual(new Set([1]));
  });

  it('stopped, it leaves no timer and forgets what it heard: watched again, a thread starts afresh', () => {
    const { watchdog, hung } = watch(new Map([[7, 0]]));
    watchdog.start();
    watchdog.start(); // starting twice checks once
    expect(clock.timers).toBe(1);
    clock.advance(TIMEOUT_MS);
    watchdog.stop();
    expect(clock.timers).toBe(0);
    expect(watchdog.watching).toBe(false);
    watchdog.start();
    clock.advance(TIMEOUT_MS);
    expect(hung).toEqual([]); // the silence before the stop does not count
    clock.advance(CHECK_MS * 2);
    expect(hung).toEqual([7]);
  });

  it('a check that stops the watchdog (the hung thread held the last activation) leaves no timer', () => {
    const holder: { watchdog?: HangWatchdog } = {};
    const watchdog = new HangWatchdog({
      timeoutMs: TIMEOUT_MS,
      clock,
      heartbeats: () => [[7, 0] as const],
      hung: () => holder.watchdog?.stop(),
    });
    holder.watchdog = watchdog;
    watchdog.start();
    clock.advance(TIMEOUT_MS * 2);
    expect(watchdog.watching).toBe(false);
    expect(clock.timers).toBe(0);
  });
});
