import { defineConfig } from 'vitest/config';

/**
 * Suites whose tests run real worker threads against real time limits (hang watchdog, cancel grace,
 * run_code busy/wall limits, heap and resource baselines). On shared 2-core machines a stolen time
 * slice can push one of them over a limit, so these — and only these — get one retry; a deterministic
 * bug still fails twice, and every retry is reported. Every other test runs once: a flaky unit test
 * shows up as a failure.
 */
const REAL_TIME_LIMIT_SUITES = [
  'test/containment/faults.test.ts',
  'test/containment/cancel-recover.test.ts',
  'test/reliability/faults.test.ts',
  'test/reliability/leaks-load.test.ts',
  'test/code-mode/run-code.test.ts',
  'test/code-mode/presentation.test.ts',
  'test/hardening/cancel-grace.test.ts',
  'test/models/abort-prompt.test.ts',
];

const QUEUE_BEHAVIOUR_SUITES = [
  'test/queue/behaviour-runner.test.ts',
  'test/delegation/*.e2e.test.ts',
  'test/subagents/*.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/stress/**', ...REAL_TIME_LIMIT_SUITES],
          retry: 0,
        },
      },
      { extends: true, test: { name: 'real-time-limits', include: REAL_TIME_LIMIT_SUITES, retry: 1 } },
      {
        // The delegation and subagent behaviour suites again, every driver on `brood host` processes
        // (queueRunner over a real Redis; test/queue/behaviour-setup.ts).
        extends: true,
        test: {
          name: 'queue-behaviour',
          include: QUEUE_BEHAVIOUR_SUITES,
          globalSetup: ['test/queue/behaviour-setup.ts'],
          retry: 0,
        },
      },
    ],
  },
});
