/**
 * Delegation depth rules, in one place (SPEC §9 "Depth"). Two kinds of number:
 * - a depth (a session header's `delegationDepth`, `createAgent({ depth })`, `resumeAgent({ depth })`):
 *   a non-negative safe integer; -0 is accepted and normalised to 0 (it is the same depth);
 * - a depth cap (`maxDepth` of a start request or a subagentTool): a non-negative safe integer; -0 is
 *   refused, because a cap of "negative zero" is a caller bug worth naming.
 */

import { BroodError } from './errors.js';
import { describe } from './util/describe.js';

function isNonNegativeSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Returns the depth (0 for -0) when it is a non-negative safe integer; anything else is INVALID_DEPTH naming the value. */
export function validateDelegationDepth(value: unknown): number {
  if (isNonNegativeSafeInteger(value)) return value === 0 ? 0 : value;
  throw new BroodError('INVALID_DEPTH', `delegationDepth must be a non-negative safe integer, got ${describe(value)}`, {
    details: { value: describe(value) },
  });
}

/** True for a valid depth cap (see the module comment for why -0 is not one). */
export function isDepthCap(value: unknown): value is number {
  return isNonNegativeSafeInteger(value) && !Object.is(value, -0);
}

/** INVALID_MAX_DEPTH for a cap outside the domain; undefined means "no cap". */
export function checkMaxDepthDomain(maxDepth: unknown): void {
  if (maxDepth === undefined || isDepthCap(maxDepth)) return;
  throw new BroodError('INVALID_MAX_DEPTH', `maxDepth must be a non-negative safe integer, got ${describe(maxDepth)}`, {
    details: { maxDepth: describe(maxDepth) },
  });
}

/** `parentDepth` is already the effective depth: max(header delegationDepth, runtime depth). */
export function childDepthFor(parentDepth: number, maxDepth: number | undefined): number {
  const child = parentDepth + 1;
  if (!Number.isSafeInteger(child)) {
    throw new BroodError('INVALID_DEPTH', `subagent depth ${child} is not a safe integer`, {
      details: { depth: child },
    });
  }
  if (maxDepth !== undefined && child > maxDepth) {
    throw new BroodError('DEPTH_EXCEEDED', `subagent depth ${child} exceeds maxDepth ${maxDepth}`, {
      details: { depth: child, maxDepth },
    });
  }
  return child;
}
