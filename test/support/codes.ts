import { expect } from 'vitest';
import type { BroodError, BroodErrorCode } from '../../src/errors.js';

/**
 * The one error-code assertion of the suite. With a function: it must throw synchronously an error
 * whose `code` is `code`. With a promise: it must reject with one. Returns the error for further checks.
 */
export function expectCode(subject: () => unknown, code: BroodErrorCode): BroodError;
export function expectCode(subject: PromiseLike<unknown>, code: BroodErrorCode): Promise<BroodError>;
export function expectCode(
  subject: (() => unknown) | PromiseLike<unknown>,
  code: BroodErrorCode,
): BroodError | Promise<BroodError> {
  if (typeof subject === 'function') {
    let thrown: unknown;
    try {
      subject();
    } catch (error) {
      thrown = error;
    }
    return checked(thrown, code, 'throw');
  }
  return Promise.resolve(subject).then(
    () => checked(undefined, code, 'reject'),
    (error: unknown) => checked(error, code, 'reject'),
  );
}

function checked(error: unknown, code: BroodErrorCode, verb: string): BroodError {
  expect(error, `expected a ${verb} with ${code}`).toMatchObject({ code });
  return error as BroodError;
}
