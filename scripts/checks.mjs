#!/usr/bin/env node
// What `npm test` runs before vitest: the lint, the import check, the build (tsup's JavaScript and the
// tsc pass that type-checks the tree and writes the declarations), then the package check.
//
// The first four only read the tree or write disjoint files of dist/ (tsup the JavaScript, the tsc pass
// the declarations), so they run at once: the tsc pass is single-threaded and takes most of the time,
// and the others fit on the second core beside it. Each step's output is held and printed in one piece
// when it ends, so the log reads as if they had run one after another. The package check packs dist/,
// so it waits for the build.
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const script = (name) => [process.execPath, join(root, 'scripts', name)];

const TOGETHER = [
  ['lint', [bin('biome'), 'check', '.']],
  ['check:imports', script('check-imports.mjs')],
  ['build: JavaScript (tsup)', [bin('tsup')]],
  ['build: types and declarations (tsc)', script('declarations.mjs')],
];
const AFTER = [['check:package', script('check-package.mjs')]];

/** Runs one step with its output captured; resolves whether it passed, after printing that output. */
function step([name, [command, ...args]]) {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n> ${name} (${code === 0 ? 'ok' : `failed, exit ${code}`}, ${seconds} s)\n`);
      process.stdout.write(Buffer.concat(output));
      done(code === 0);
    });
  });
}

const together = await Promise.all(TOGETHER.map(step));
if (together.every(Boolean)) {
  const after = await Promise.all(AFTER.map(step));
  if (!after.every(Boolean)) process.exitCode = 1;
} else {
  process.exitCode = 1;
}
