/**
 * The driver's clock for the events it stamps (`at`, see DriverStamp): epoch milliseconds rounded to
 * the microsecond. Pool threads share the process's time origin, so in-process drivers and the parent
 * read one clock; a driver in another process or on another machine reads its own.
 */
import { epochNow } from '../clock.js';

export function driverTime(): number {
  return Math.round(epochNow() * 1000) / 1000;
}
