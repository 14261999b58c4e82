/** Delegation depth accounting (SPEC §9 "Depth"): checked before a child exists. */
import { BroodError } from '../errors.js';

/** `parentDepth` is already the effective depth: max(header delegationDepth, runtime depth). */
export function childDepthFor(parentDepth: number, maxDepth: number | undefined): number {
  const child = parentDepth + 1;
  if (!Number.isSafeInteger(child)) {
    throw new BroodError('INVALID_DEPTH', `subagent depth ${child} is not a safe integer`, { details: { depth: child } });
  }
  if (maxDepth !== undefined && child > maxDepth) {
    throw new BroodError('DEPTH_EXCEEDED', `subagent depth ${child} exceeds maxDepth ${maxDepth}`, { details: { depth: child, maxDepth } });
  }
  return child;
}
