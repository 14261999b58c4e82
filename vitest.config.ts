import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/stress/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The containment, watchdog and leak suites run real threads against real time limits on shared
    // 2-core machines; one retry absorbs a stolen time slice. A deterministic bug still fails twice,
    // and every retry is reported in the output.
    retry: 1,
  },
});
