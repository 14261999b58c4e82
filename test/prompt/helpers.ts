import { expect } from 'vitest';
import { BroodError, type BroodErrorCode } from '../../src/errors.js';
import type { ToolView } from '../../src/types.js';

export function toolView(names: string[]): ToolView {
  const sorted = [...names].sort();
  return {
    names: sorted,
    schemas: sorted.map((name) => ({ name, description: name, parameters: { type: 'object' } })),
    has: (name) => sorted.includes(name),
  };
}

/** Runs fn, asserts it throws a BroodError with `code`, and returns the error for detail checks. */
export function expectCode(fn: () => unknown, code: BroodErrorCode): BroodError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(BroodError);
  expect((caught as BroodError).code).toBe(code);
  return caught as BroodError;
}
