/**
 * Whom a thread's death is charged to (SPEC §10.5) when a driver's fault runs in a callback its adapter
 * scheduled rather than in its own await chain. The thread records the driver at that entry too, so
 * the culprit fails at the first death — its model request made once, never re-run as a suspect — and
 * the sibling that shared its thread is recovered and finishes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood, moduleAdapter } from '../../../src/index.js';

const SCHEDULES = ['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'nextTick'] as const;
const route = { provider: 'deferred', model: 'm' };

let dir: string;
let log: string;
let brood: Brood | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'brood-deferred-'));
  log = join(dir, 'requests.log');
});
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function runtime(): Brood {
  return createBrood({
    // One thread: the sibling always shares the culprit's thread. A spin is found after hangTimeoutMs,
    // long enough that a thread slowed by a loaded machine is never taken for a hung one.
    pool: { threads: 1, hangTimeoutMs: 1_500 },
    codeBusyTimeoutMs: 100,
    models: [
      moduleAdapter({
        id: 'deferred',
        models: ['m'],
        moduleUrl: new URL('./fixtures/deferred-fault-adapter.mjs', import.meta.url),
        options: { log, slowMs: 300 },
      }),
    ],
  });
}

/** Prompts the adapter was asked with, in order, across every thread that ran it. */
function requests(): string[] {
  return readFileSync(log, 'utf8').trim().split('\n');
}

describe.each(['throw', 'spin'] as const)('a fault that runs in a scheduled callback (%s)', (fault) => {
  it.each(SCHEDULES)('scheduled with %s fails its driver at the first death', async (schedule) => {
    brood = runtime();
    const sibling = await brood.createAgent({ model: route });
    const culprit = await brood.createAgent({ model: route });
    const siblingRun = sibling.run('sibling');
    const culpritPrompt = `defer ${schedule} ${fault}`;
    const culpritRun = await culprit.run(culpritPrompt);

    expect(culpritRun.stopReason).toBe('error');
    expect(await siblingRun).toMatchObject({ stopReason: 'completed', output: 'answered: sibling' });
    expect(requests().filter((prompt) => prompt === culpritPrompt)).toHaveLength(1);
  });
});
