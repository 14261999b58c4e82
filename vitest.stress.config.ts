import { defineConfig } from 'vitest/config';

// On-demand stress suite (`npm run test:stress`); the default config excludes test/stress.
export default defineConfig({
  test: {
    include: ['test/stress/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
