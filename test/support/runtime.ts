/**
 * One runtime factory per runner. A suite says which runner it exercises; the tier it sits in says
 * what that runner needs (test/unit: the inline runner only; test/threads: the worker pool).
 */
import { inject } from 'vitest';
import type { Brood, BroodOptions } from '../../src/index.js';
import { createBrood } from '../../src/index.js';
import { queueRunner, type RunnerChoice } from '../../src/queue/config.js';

declare module 'vitest' {
  export interface ProvidedContext {
    broodQueueRedis?: string;
  }
}

export type RunnerKind = 'worker' | 'inline';
export const RUNNERS: RunnerKind[] = ['worker', 'inline'];

/** Drivers on the main thread. */
export function inlineBrood(options: BroodOptions = {}): Brood {
  return createBrood({ runner: 'inline', ...options });
}

/** Drivers on two pool threads. */
export function workerBrood(options: BroodOptions = {}): Brood {
  return createBrood({ runner: 'worker', pool: { threads: 2 }, ...options });
}

export function makeBrood(runner: RunnerKind, options: BroodOptions = {}): Brood {
  return runner === 'inline' ? inlineBrood(options) : workerBrood(options);
}

/**
 * Where the behaviour suites (delegation, subagents) run their drivers: the worker pool, or — in the
 * `queue-behaviour` project, whose global setup starts Redis and two `brood host` processes
 * (test/queue/behaviour-setup.ts) — a queueRunner.
 */
export function behaviourRunner(): RunnerChoice {
  const url = inject('broodQueueRedis');
  return url === undefined ? 'worker' : queueRunner({ connection: url, queue: 'behaviour' });
}

/** A runtime on the behaviour suites' runner, with two pool threads. */
export function behaviourBrood(options: BroodOptions = {}): Brood {
  return createBrood({ runner: behaviourRunner(), pool: { threads: 2 }, ...options });
}
