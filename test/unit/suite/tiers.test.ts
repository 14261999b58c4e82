/**
 * The suite's own rules (vitest.config.ts, package.json): one folder per tier, the unit, threads and
 * processes tiers in one project (one pool of workers); retries only for the suites that run real
 * threads against real time limits, so a flaky test anywhere else is seen; `npm test` runs every tier
 * but the queue, `npm run test:queue` the queue.
 */
import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import config from '../../../vitest.config.js';

interface Project {
  test: { name: string; include: string[]; exclude?: string[]; retry?: number };
}

const projects = (config as { test: { projects: Project[] } }).test.projects;
const project = (name: string): Project => {
  const found = projects.find((candidate) => candidate.test.name === name);
  if (!found) throw new Error(`no project ${name}`);
  return found;
};

it('only the named real-time-limit suites are retried, and they exist', () => {
  expect((config as { test: { retry?: number } }).test.retry ?? 0).toBe(0);
  const retried = projects.filter((candidate) => (candidate.test.retry ?? 0) > 0);
  expect(retried.map((candidate) => candidate.test.name)).toEqual(['real-time-limits']);
  const suites = retried[0]!.test.include;
  for (const suite of suites) {
    expect(suite.includes('*'), `${suite} must name one file, not a glob`).toBe(false);
    expect(existsSync(suite), suite).toBe(true);
    expect(suite.startsWith('test/threads/'), `${suite} runs real threads`).toBe(true);
  }
  expect(project('unit+threads+processes').test.exclude).toEqual(expect.arrayContaining(suites));
  for (const candidate of projects) if (candidate !== retried[0]) expect(candidate.test.retry).toBe(0);
});

it('each tier is one folder of test/, and npm test runs every tier but the queue', () => {
  expect(project('unit+threads+processes').test.include).toEqual(
    ['unit', 'threads', 'processes'].map((tier) => `test/${tier}/**/*.test.ts`),
  );
  expect(project('queue').test.include).toEqual(['test/queue/**/*.test.ts']);
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const projectsOf = (script: string) => [...(scripts[script] ?? '').matchAll(/--project (\S+)/g)].map((m) => m[1]);
  expect(projectsOf('test').sort()).toEqual(['real-time-limits', 'unit+threads+processes']);
  expect(projectsOf('test:queue').sort()).toEqual(['queue', 'queue-behaviour']);
});
