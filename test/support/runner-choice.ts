/**
 * Which runner the behaviour suites use: the worker pool, or — in the `queue-behaviour` project
 * (vitest.config.ts), whose global setup starts Redis and two `brood host` processes — a queueRunner.
 */
import { inject } from 'vitest';
import { queueRunner } from '../../src/queue/config.js';
import type { RunnerChoice } from '../../src/queue/config.js';

declare module 'vitest' {
  export interface ProvidedContext {
    broodQueueRedis?: string;
  }
}

export function behaviourRunner(): RunnerChoice {
  const url = inject('broodQueueRedis');
  return url === undefined ? 'worker' : queueRunner({ connection: url, queue: 'behaviour' });
}
