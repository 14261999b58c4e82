/**
 * Schemas for what a SessionStore accepts and what a JSONL session file may contain (SPEC §6).
 *
 * `delegationDepth` is deliberately NOT part of the header schema: a bad depth has its own error code
 * (INVALID_DEPTH) that must win over the generic "bad header" code, so it is checked separately first.
 */
import { z } from 'zod';
import { validateDelegationDepth } from '../depth.js';
import { BroodError } from '../errors.js';
import { modelRoute, modelRouteShape } from '../models/route.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import { describe } from '../util/describe.js';
import { isPlainObject } from '../util/plain.js';

const modelRouteSchema = z.looseObject(modelRouteShape());

// Loose objects: a newer writer may add fields; an older reader keeps them instead of silently dropping them.
export const sessionHeaderSchema = z.looseObject({
  id: z.string().min(1),
  createdAt: z.number(),
  parentSession: z.string().min(1).optional(),
  origin: z.literal('subagent').optional(),
  delegationDepth: z.unknown(),
  seedLength: z.number().int().nonnegative().optional(),
  model: modelRouteSchema,
});

export const sessionEventSchema = z.looseObject({
  seq: z.number().int().nonnegative(),
  time: z.number(), // zod 4 refuses NaN and ±Infinity, which JSON would turn into null
  type: z.string().min(1),
  // Judged like the fast path (zod's record check refuses legitimate data such as { constructor: 1 }).
  data: z.custom<Record<string, unknown>>((value) => isPlainObject(value), 'expected a plain object'),
});

/**
 * Validates a header: INVALID_DEPTH for a bad depth, otherwise `code` (INVALID_CONFIG for API input;
 * the JSONL loader re-labels it SESSION_CORRUPT with file/line).
 */
export function checkHeader(value: unknown): SessionHeader {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BroodError('INVALID_CONFIG', `session header must be an object, got ${describe(value)}`);
  }
  validateDelegationDepth((value as { delegationDepth?: unknown }).delegationDepth);
  if (isQuickHeader(value as Record<string, unknown>)) return value as SessionHeader;
  const parsed = sessionHeaderSchema.safeParse(value);
  if (!parsed.success) {
    throw new BroodError('INVALID_CONFIG', `invalid session header: ${summarize(parsed.error)}`);
  }
  return value as SessionHeader;
}

/**
 * The common valid header, checked by hand: every agent's session is created through here (a wide
 * fan-out creates thousands at once). True only where sessionHeaderSchema accepts too (the property
 * tests hold it to that); anything else goes to zod, which decides and explains.
 */
export function isQuickHeader(value: Record<string, unknown>): boolean {
  const { id, createdAt, parentSession, origin, seedLength, model } = value;
  return (
    typeof id === 'string' &&
    id.length > 0 &&
    Number.isFinite(createdAt) &&
    // Any value, but the key itself is required (zod reads it with `in`).
    'delegationDepth' in value &&
    (parentSession === undefined || (typeof parentSession === 'string' && parentSession.length > 0)) &&
    (origin === undefined || origin === 'subagent') &&
    (seedLength === undefined || (Number.isSafeInteger(seedLength) && (seedLength as number) >= 0)) &&
    modelRoute.check(model)
  );
}

/**
 * Shape-checks one event; returns a human reason or undefined when valid. Appends are on the hot path
 * (every driver event), so the common valid case is checked by hand and zod only explains a failure.
 */
export function eventProblem(value: unknown): string | undefined {
  if (isQuickEvent(value)) return undefined;
  const parsed = sessionEventSchema.safeParse(value);
  return parsed.success ? undefined : summarize(parsed.error);
}

/** The hand-written twin of sessionEventSchema; the property tests hold them to the same verdict. */
export function isQuickEvent(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { seq, time, type, data } = value as Partial<SessionEvent>;
  return (
    Number.isSafeInteger(seq) &&
    (seq as number) >= 0 &&
    Number.isFinite(time) &&
    typeof type === 'string' &&
    type.length > 0 &&
    isPlainObject(data)
  );
}

/** Shape-checks a batch about to be appended (at call time, before the caller can mutate it). */
export function checkEventShapes(id: string, events: unknown): SessionEvent[] {
  if (!Array.isArray(events)) throw new BroodError('INVALID_CONFIG', `append(${id}): events must be an array`);
  // Loops, not forEach: every append of every session passes here (no closure per call).
  for (let index = 0; index < events.length; index++) {
    const problem = eventProblem(events[index]);
    if (problem !== undefined) {
      throw new BroodError('INVALID_CONFIG', `append(${id}): invalid event at index ${index}: ${problem}`);
    }
  }
  return events as SessionEvent[];
}

/**
 * seq is contiguous from 0 (SPEC §6); `nextSeq` is what the batch's first event must carry.
 * Rejecting a gap at write time beats a SESSION_CORRUPT at resume time.
 */
export function checkSeqs(id: string, seqs: readonly (number | SessionEvent)[], nextSeq: number): void {
  for (let index = 0; index < seqs.length; index++) {
    const item = seqs[index] as number | SessionEvent;
    const seq = typeof item === 'number' ? item : item.seq;
    if (seq !== nextSeq + index) {
      throw new BroodError('INVALID_CONFIG', `append(${id}): expected seq ${nextSeq + index}, got ${seq}`, {
        details: { expected: nextSeq + index, got: seq },
      });
    }
  }
}

function summarize(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}
