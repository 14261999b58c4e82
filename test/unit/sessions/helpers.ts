import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionEvent, SessionHeader } from '../../../src/types.js';

export function header(id: string, extra: Partial<SessionHeader> = {}): SessionHeader {
  return {
    id,
    createdAt: 1_700_000_000_000,
    delegationDepth: 0,
    model: { provider: 'scripted', model: 'm1' },
    ...extra,
  };
}

export function events(from: number, count: number, type = 'user/message'): SessionEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    seq: from + i,
    time: 1000 + from + i,
    type,
    data: { n: from + i, text: `msg ${from + i}` },
  }));
}

/** A fresh directory per test; `cleanup` removes it. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'brood-sessions-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
