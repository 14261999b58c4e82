#!/usr/bin/env node
// The library's type declarations, from the same TypeScript pass that type-checks the whole tree.
// `tsc` over tsconfig.json (src, workers, tests, bench, examples) writes every file's declarations
// into a scratch directory; src's are moved into dist/ beside tsup's JavaScript (dist/index.d.ts is
// the `types` of package.json's exports). One pass does what `tsc --noEmit` plus a declaration build
// (a second full check of src) used to do. `npm run build` runs it after tsup, so a build fails on
// any type error; BROOD_BUILD_DTS=0 (`npm start`'s JavaScript-only build) skips it.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.env.BROOD_BUILD_DTS === '0') process.exit(0);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const scratch = mkdtempSync(join(tmpdir(), 'brood-declarations-'));
try {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const emit = ['--noEmit', 'false', '--declaration', '--emitDeclarationOnly', '--outDir', scratch];
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), ...emit], { stdio: 'inherit' });
  cpSync(join(scratch, 'src'), join(root, 'dist'), { recursive: true });
} catch (error) {
  // tsc has printed the type errors; one line says which step failed.
  console.error(`declarations: failed (${error instanceof Error ? error.message.split('\n')[0] : error})`);
  process.exitCode = 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
