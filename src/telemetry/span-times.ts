/** The times spans are given: epoch milliseconds as the SDK's HrTime, and which clock a fact's time comes from. */
import type { HrTime } from '@opentelemetry/api';

/**
 * An epoch-ms time as the SDK's HrTime, computed exactly as its millisToHrTime does. The SDK takes
 * an HrTime as it is; a number costs it a performance.now() per call to tell epoch from relative time.
 */
export function hrTimeOf(epochMs: number): HrTime {
  return [Math.trunc(epochMs / 1000), Math.round((epochMs % 1000) * 1e6)];
}

/**
 * When the logged fact happened: the driver's stamp when it has one, else the log's. A stamp later
 * than the parent's receipt is a driver clock ahead of the parent's (another machine): the receipt is
 * the better bound, and keeps the span inside its turn.
 */
export function factTime(loggedTime: number, driverTime: number | undefined): number {
  return driverTime !== undefined && driverTime <= loggedTime ? driverTime : loggedTime;
}
