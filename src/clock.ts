/**
 * The one clock: milliseconds since the epoch with performance.now()'s resolution, and timers on it.
 * Both sides of the thread boundary read it (threads of one process share the time origin); whatever
 * waits on time takes a `Clock`, so its policy is tested on fake time (test/support/fake-clock.ts).
 */

/** performance.timeOrigin is constant for a thread, and its getter is not free. */
const TIME_ORIGIN = performance.timeOrigin;

export function epochNow(): number {
  return TIME_ORIGIN + performance.now();
}

/** Time and timers, injected where a policy waits on time. */
export interface Clock {
  now(): number;
  /**
   * Runs `callback` once `ms` of this clock's time has passed; the returned function cancels it. A
   * pending timer does not keep the process alive: a host with nothing else to do exits.
   */
  setTimeout(callback: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: epochNow,
  setTimeout(callback, ms) {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
