import { defineConfig } from 'tsup';

// Library entries and worker entries are built together; workers are located at run time relative to
// the built module (`new URL('./workers/driver.js', import.meta.url)`), so they must land in dist/workers.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    testing: 'src/testing.ts',
    'workers/driver': 'workers/driver.ts',
    // The `brood` bin; src/cli/main.ts starts with a hashbang, which esbuild keeps.
    'cli/main': 'src/cli/main.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts', testing: 'src/testing.ts' } },
  sourcemap: true,
  clean: false, // parallel test runs keep loading dist/workers while a rebuild writes it
  splitting: true,
  shims: false,
});
