import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { BroodError } from '../../src/errors.js';
import type { BroodErrorCode } from '../../src/errors.js';
import type { SessionEvent, SessionHeader } from '../../src/types.js';

export function header(id: string, extra: Partial<SessionHeader> = {}): SessionHeader {
  return { id, createdAt: 1_700_000_000_000, delegationDepth: 0, model: { provider: 'scripted', model: 'm1' }, ...extra };
}

export function events(from: number, count: number, type = 'user/message'): SessionEvent[] {
  return Array.from({ length: count }, (_, i) => ({ seq: from + i, time: 1000 + from + i, type, data: { n: from + i, text: `msg ${from + i}` } }));
}

/** A fresh directory per test; `cleanup` removes it. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'brood-sessions-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Awaits a rejection and asserts it is a BroodError with `code`; returns it for detail checks. */
export async function rejectsWith(promise: Promise<unknown>, code: BroodErrorCode): Promise<BroodError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected rejection with ${code}`).toBeInstanceOf(BroodError);
  expect((error as BroodError).code).toBe(code);
  return error as BroodError;
}
