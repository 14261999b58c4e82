#!/usr/bin/env node
// Package check run by `npm test` after its build: packs the package exactly as `npm publish` would
// (the files list, the exports map, the declarations) and lints the tarball with
// @arethetypeswrong/cli (`--profile esm-only`: no problem allowed) and publint (`--strict`: no error,
// no warning). Packs with --ignore-scripts: `npm test` has just built dist/, and prepack's clean
// build is for publishing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const dir = mkdtempSync(join(tmpdir(), 'brood-check-package-'));
try {
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  );
  const tarball = join(dir, packed[0].filename);
  console.log(`check:package: ${packed[0].filename}, ${packed[0].entryCount} files, ${kb(packed[0].size)} packed`);
  execFileSync(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'table-flipped', '--no-emoji'], {
    stdio: 'inherit',
  });
  execFileSync(bin('publint'), ['run', tarball, '--strict'], { stdio: 'inherit' });
} catch (error) {
  console.error(`check:package: failed (${error instanceof Error ? error.message.split('\n')[0] : error})`);
  process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function kb(bytes) {
  return `${Math.round(bytes / 1024)} KB`;
}
