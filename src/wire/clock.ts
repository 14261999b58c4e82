/**
 * The name of the clock a time crosses on. Threads of one process read the same clock (src/clock.ts);
 * other processes and machines may not (their epoch is read at start-up to a millisecond, and
 * machines drift), so a time that crosses carries LOCAL_CLOCK and is read as an absolute time only
 * where LOCAL_CLOCK is the same.
 */
import { hostname } from 'node:os';

/** Names this process's clock (every thread of a process shares it). */
export const LOCAL_CLOCK = `${hostname()}/${process.pid}`;
