/**
 * Crash resume (docs/sessions.md "Crash resume"): a 3-level delegation tree on fileSessions runs in a
 * child process (fixtures/resume-tree.mjs, built dist) that is SIGKILLed at seeded points of its
 * progress; its model is a loopback server here, outside the killed process, that counts every
 * request by conversation and step. A new process then runs `brood.recover()`, and:
 * - every turn of every session ends, the root's completed;
 * - no request whose answer the killed process had logged is sent again;
 * - no non-idempotent call (`charge`) ran twice;
 * - the root's answer equals the uninterrupted run's wherever no call's outcome was unknown.
 * Worker runner and inline runner.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killPoint, runUntilKilled } from '../../support/crash-fixture.js';
import { ofType } from '../../support/events.js';
import { answeredKeys, effects, ModelServer, namespaceOf, readAll, rootOutput } from '../../support/resume-tree.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/resume-tree.mjs', import.meta.url));
const SEEDS = 20;
const PARALLEL = 2;

let models: ModelServer;

beforeAll(async () => {
  models = await ModelServer.start();
});
afterAll(() => models.close());

/** Runs the fixture; in `run` mode SIGKILLs it right after its `killAfter`-th progress line. */
function runFixture(
  mode: 'run' | 'recover',
  runner: string,
  dir: string,
  killAfter = Infinity,
): Promise<{ lines: string[]; killed: boolean }> {
  const url = `${models.url}/${namespaceOf(dir)}/v1`;
  return runUntilKilled([FIXTURE, mode, runner, dir, join(dir, 'effects.log'), url], `fixture (${mode})`, killAfter);
}

describe.each(['worker', 'inline'])("runner: '%s'", (runner) => {
  let base: string;
  let fullLines = 0;
  let fullOutput: string | undefined;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), `brood-resume-${runner}-`));
    const full = await runFixture('run', runner, join(base, 'full'));
    expect(full.killed).toBe(false);
    expect(full.lines.at(-1)).toBe('done');
    fullLines = full.lines.length;
    fullOutput = rootOutput(await readAll(join(base, 'full')));
    expect(fullOutput).toContain('root: build =>');
  }, 60_000);
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it(`recovers the tree killed at ${SEEDS} seeded points: nothing answered asked again, no side effect twice`, async () => {
    const outcomes: string[] = [];
    let childrenCut = 0;
    const check = async (seed: number): Promise<void> => {
      const dir = join(base, `seed-${seed}`);
      const point = killPoint(seed, fullLines - 2);
      const killed = await runFixture('run', runner, dir, point);
      // The writer batches appends by timing, so a run may log fewer lines than the full one did and end
      // before a late kill point: that seed crashed nothing, and the next seed is tried instead.
      if (!killed.killed) return;
      const before = await readAll(dir);
      const answered = answeredKeys(before, namespaceOf(dir));
      const childCut = [...before].some(
        ([id, events]) => id !== 'root' && ofType(events, 'turn/start').length > ofType(events, 'turn/end').length,
      );
      if (childCut) childrenCut += 1;
      const sentAtKill = new Map(answered.map((key) => [key, models.sent.get(key) ?? 0]));
      const recovery = await runFixture('recover', runner, dir);
      expect(recovery.lines.at(-1), `seed ${seed}`).toBe('done');
      expect(recovery.lines).toContain('again 0');
      const after = await readAll(dir);
      // Every turn of every session ended; the root's last one completed.
      for (const [id, events] of after) {
        expect(ofType(events, 'turn/end').length, `seed ${seed} ${id}`).toBe(ofType(events, 'turn/start').length);
      }
      // Killed before the root's message was accepted: there was nothing to resume.
      const accepted = ofType(after.get('root') ?? [], 'user/message').length > 0;
      if (accepted)
        expect(ofType(after.get('root') ?? [], 'turn/end').at(-1)?.data.reason, `seed ${seed}`).toBe('completed');
      // Nothing answered is asked again (each key counted across both processes; the server is here).
      for (const [key, count] of sentAtKill) expect(models.sent.get(key), `seed ${seed} ${key}`).toBe(count);
      // No non-idempotent call ran twice (a line per run: kind, agent, call id, tag).
      const charges = effects(dir).filter((line) => line.startsWith('charge '));
      expect(new Set(charges).size, `seed ${seed}`).toBe(charges.length);
      const unknown = [...after.values()].some((events) =>
        ofType(events, 'tool/result').some((e) => String(e.data.content).includes('TOOL_OUTCOME_UNKNOWN')),
      );
      if (accepted && !unknown) expect(rootOutput(after), `seed ${seed}`).toBe(fullOutput);
      outcomes.push(!accepted ? 'not accepted' : unknown ? 'unknown' : 'equal');
    };
    // Seeds in order until SEEDS of them killed the run mid-way (at most twice as many tried).
    let nextSeed = 1;
    while (outcomes.length < SEEDS && nextSeed <= 2 * SEEDS) {
      const batch = Array.from({ length: PARALLEL }, () => nextSeed++);
      await Promise.all(batch.map(check));
    }
    expect(outcomes.length).toBeGreaterThanOrEqual(SEEDS);
    // The seeds reach both kinds of resume: some answers equal the uninterrupted run's, some calls were of unknown outcome.
    expect(outcomes).toContain('equal');
    expect(outcomes).toContain('unknown');
    // ...and some kills cut a child mid-turn: it was resumed inside its parent's call.
    expect(childrenCut).toBeGreaterThan(0);
  }, 240_000);
});
