/** Small helpers for the hardening suite (issue 12). */
import { BroodError } from '../../src/index.js';

/** Runs fn and returns the BroodError it threw synchronously; fails the test when it does not throw one. */
export function thrownError(fn: () => unknown): BroodError {
  try {
    fn();
  } catch (error) {
    if (error instanceof BroodError) return error;
    throw new Error(`expected a BroodError, got ${String(error)}`);
  }
  throw new Error('expected a BroodError, nothing was thrown');
}

/** Awaits fn and returns the BroodError it rejected with. */
export async function rejectedError(fn: () => Promise<unknown>): Promise<BroodError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof BroodError) return error;
    throw new Error(`expected a BroodError, got ${String(error)}`);
  }
  throw new Error('expected a rejection, it resolved');
}
