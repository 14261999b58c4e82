#!/usr/bin/env node
// The library's type declarations, from the same TypeScript pass that type-checks the whole tree.
// `tsc` over tsconfig.json (src, workers, tests, bench, examples) writes every file's declarations
// into .tsbuild/types; src's are copied into dist/ beside tsup's JavaScript (dist/index.d.ts is the
// `types` of package.json's exports). One pass does what `tsc --noEmit` plus a declaration build
// (a second full check of src) used to do. `npm run build` runs it after tsup, so a build fails on
// any type error; BROOD_BUILD_DTS=0 (`npm start`'s JavaScript-only build) skips it.
//
// The pass is incremental: .tsbuild/ keeps tsc's build info (each file's hash and the errors found)
// beside the declarations it wrote, so the next run checks again only the files that changed and
// those whose imports' declarations changed — the same errors, a cold check is ~25 s of CPU, a run
// after editing a test file a few seconds. Delete .tsbuild/ to start cold.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.env.BROOD_BUILD_DTS === '0') process.exit(0);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Kept beside its build info: tsc writes declarations only for files it checked again, so the
// declarations of unchanged files must still be here from the run that wrote them.
const out = join(root, '.tsbuild', 'types');
try {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const emit = ['--noEmit', 'false', '--declaration', '--emitDeclarationOnly', '--outDir', out];
  const incremental = ['--incremental', '--tsBuildInfoFile', join(out, 'tsconfig.tsbuildinfo')];
  // A larger young generation: tsc allocates fast and keeps little, so fewer, larger scavenges save
  // it work (a cold pass on the 2-core machine: 34.5 s of CPU → 29.2 s, 21.7 s → 18.7 s of wall).
  const youngGeneration = '--max-semi-space-size=64';
  execFileSync(process.execPath, [youngGeneration, tsc, '-p', join(root, 'tsconfig.json'), ...emit, ...incremental], {
    stdio: 'inherit',
  });
  dropOrphans(join(out, 'src'), join(root, 'src'));
  cpSync(join(out, 'src'), join(root, 'dist'), { recursive: true });
} catch (error) {
  // tsc has printed the type errors; one line says which step failed.
  console.error(`declarations: failed (${error instanceof Error ? error.message.split('\n')[0] : error})`);
  process.exitCode = 1;
}

/** Removes declarations whose source file is gone (tsc never deletes what an earlier run wrote). */
function dropOrphans(declarations, sources) {
  for (const entry of readdirSync(declarations, { withFileTypes: true })) {
    const path = join(declarations, entry.name);
    if (entry.isDirectory()) {
      if (existsSync(join(sources, entry.name))) dropOrphans(path, join(sources, entry.name));
      else rmSync(path, { recursive: true, force: true });
    } else if (entry.name.endsWith('.d.ts') && !existsSync(join(sources, entry.name.replace(/\.d\.ts$/, '.ts')))) {
      rmSync(path);
    }
  }
}
