/**
 * A clock both sides of a crossing can read: milliseconds since the epoch with performance.now()'s
 * resolution. Threads of one process read the same clock; other processes and machines may not
 * (their epoch is read at start-up to a millisecond, and machines drift), so a time that crosses
 * carries LOCAL_CLOCK and is read as an absolute time only where LOCAL_CLOCK is the same.
 */
import { hostname } from 'node:os';

/** performance.timeOrigin is constant for a thread, and its getter is not free. */
const TIME_ORIGIN = performance.timeOrigin;

export function epochNow(): number {
  return TIME_ORIGIN + performance.now();
}

/** Names this process's clock (every thread of a process shares it). */
export const LOCAL_CLOCK = `${hostname()}/${process.pid}`;
