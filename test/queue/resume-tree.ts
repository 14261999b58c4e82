/**
 * Runs of fixtures/resume-tree.mjs (the crash-resume tree as a parent whose drivers are on
 * `brood host` processes) that can be SIGKILLed after a given progress line.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type FixtureRun, spawnFixture } from '../support/crash-fixture.js';
import { type ModelServer, namespaceOf } from '../support/resume-tree.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/resume-tree.mjs', import.meta.url));

export interface Fixture {
  dir: string;
  models: ModelServer;
  redisURL: string;
  queue: string;
  /** The parent's `activationTimeoutMs`: how soon a dead host is replaced, and a dead parent dropped. */
  activationTimeoutMs: number;
}

/**
 * Runs the fixture; `onLine(n)` is called after its n-th progress line (the test kills something
 * there). Its lines: store calls, then `result …` / `recovered …`, `again N`, `done`.
 */
export function runFixture(
  mode: 'run' | 'recover',
  at: Fixture,
  onLine?: (count: number, run: FixtureRun) => void,
): FixtureRun {
  const baseURL = `${at.models.url}/${namespaceOf(at.dir)}/v1`;
  const args = [
    FIXTURE,
    mode,
    at.dir,
    join(at.dir, 'effects.log'),
    baseURL,
    at.redisURL,
    at.queue,
    String(at.activationTimeoutMs),
  ];
  return spawnFixture(args, `fixture (${mode})`, onLine);
}
