import { defineConfig } from 'vitest/config';

/**
 * Tiers, one folder of test/ each, named for what its tests run:
 *   unit       pure modules and the inline runner: no thread, no child process (test/unit)
 *   threads    real pool and sandbox threads (test/threads; dist/workers must be built)
 *   processes  child processes: the CLI, MCP servers, ACP agents, the examples (test/processes)
 *   queue      a real Redis and `brood host` processes (test/queue), plus `queue-behaviour` below
 * `npm test` runs every tier but the queue; `npm run test:queue` runs the queue (README, Tests).
 *
 * The unit, threads and processes tiers are one vitest project, `unit+threads+processes`: vitest gives
 * each project workers and a module graph of its own, so as three projects they started nine worker
 * processes that each transformed and imported src again (transform and import time halved when
 * merged). A tier alone is its folder: `npx vitest run --project unit+threads+processes test/threads`.
 */
const TIERS = ['unit', 'threads', 'processes'];

/**
 * Suites whose tests run real worker threads against real time limits (hang watchdog, cancel grace,
 * run_code busy/wall limits, heap and resource baselines). On shared 2-core machines a stolen time
 * slice can push one of them over a limit, so these — and only these — get one retry, and they run
 * before every other test file, two files at a time; a deterministic bug still fails twice, and every
 * retry is reported. Every other test runs once: a flaky test shows up as a failure.
 */
const REAL_TIME_LIMIT_SUITES = [
  'test/threads/pool/faults-independent.test.ts',
  'test/threads/pool/faults-siblings.test.ts',
  'test/threads/pool/fault-attribution.test.ts',
  'test/threads/pool/leaks-load.test.ts',
  'test/threads/cancel/cancel-recover.test.ts',
  'test/threads/code-mode/run-code.test.ts',
  'test/threads/code-mode/presentation.test.ts',
  'test/threads/code-mode/sandbox-limits.test.ts',
  'test/threads/models/abort-prompt.test.ts',
];

/** The delegation and subagent behaviour suites, run again with every driver on `brood host` processes. */
const QUEUE_BEHAVIOUR_SUITES = [
  'test/queue/behaviour-runner.test.ts',
  'test/threads/delegation/*.e2e.test.ts',
  'test/threads/subagents/*.test.ts',
];

/**
 * Test files run three at a time on this 2-core machine: much of a file's time is spent waiting on
 * threads, child processes, sockets and fsync (cli/terminal: ~6 s of CPU in ~26 s; agents/cancel-stops:
 * ~3 s in ~15 s), and a file that waits holds its worker. With two workers the sum of the files'
 * durations (~375 s) divided by two was longer than their CPU (~300 s) shared by two cores: the cores
 * idled while both workers waited. A third worker fills those waits (vitest's default here is one).
 */
const PARALLEL_FILES = 3;

/** The Redis tier (`npm run test:queue`) keeps two files at a time, in a group of its own. */
const QUEUE_TIER = { maxWorkers: 2, sequence: { groupOrder: 2 } };

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: PARALLEL_FILES,
    // Every project runs in group 1 but the real-time-limits suites, which run first (group 0, below).
    sequence: { groupOrder: 1 },
    // Projects below (not the queue's) set `isolate: false`: a worker process runs file after file in
    // one module graph instead of a fresh process and src import per file, which was a third of the
    // CPU of `npm test`. Their suites close what they start and restore what they change.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit+threads+processes',
          include: TIERS.map((tier) => `test/${tier}/**/*.test.ts`),
          exclude: REAL_TIME_LIMIT_SUITES,
          retry: 0,
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'real-time-limits',
          include: REAL_TIME_LIMIT_SUITES,
          retry: 1,
          // A group of its own, before the others, two files at a time: these suites mostly wait (~23 s of
          // CPU in ~25 s), and in `npm test` they run beside the single-threaded tsc pass (scripts/checks.mjs),
          // which takes the other core — no other test file competes with them. Run last, as they were,
          // they left a core idle for their whole duration at the end of the run.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'queue',
          include: ['test/queue/**/*.test.ts'],
          exclude: ['test/queue/behaviour-runner.test.ts'],
          retry: 0,
          ...QUEUE_TIER,
        },
      },
      {
        // One Redis and two `brood host` processes for the whole project (test/queue/behaviour-setup.ts).
        extends: true,
        test: {
          name: 'queue-behaviour',
          include: QUEUE_BEHAVIOUR_SUITES,
          globalSetup: ['test/queue/behaviour-setup.ts'],
          retry: 0,
          ...QUEUE_TIER,
        },
      },
    ],
  },
});
