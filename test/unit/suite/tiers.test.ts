/**
 * Issue 12 item 14: retries are for the suites that run real threads against real time limits only;
 * every other test runs once, so a flaky unit test is seen.
 */
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import config from '../../../vitest.config.js';

interface Project {
  test: { name: string; include: string[]; exclude?: string[]; retry?: number };
}

it('only the named real-time-limit suites are retried, and they exist', () => {
  const projects = (config as { test: { retry?: number; projects: Project[] } }).test.projects;
  expect((config as { test: { retry?: number } }).test.retry ?? 0).toBe(0);
  const retried = projects.filter((project) => (project.test.retry ?? 0) > 0);
  expect(retried).toHaveLength(1);
  const suites = retried[0]!.test.include;
  for (const suite of suites) {
    expect(suite.includes('*'), `${suite} must name one file, not a glob`).toBe(false);
    expect(existsSync(suite), suite).toBe(true);
  }
  const unit = projects.find((project) => project.test.name === 'unit')!;
  expect(unit.test.retry).toBe(0);
  expect(unit.test.exclude).toEqual(expect.arrayContaining(suites));
});
