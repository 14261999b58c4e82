#!/usr/bin/env node
// `npm test` up to its tests: the lint, the import check, the build (tsup's JavaScript and the tsc
// pass that type-checks the tree and writes the declarations), then the package check — and, with a
// command after its name (`node scripts/checks.mjs vitest run …`), that command beside the package check.
//
// The first four only read the tree or write disjoint files of dist/ (tsup the JavaScript, the tsc pass
// the declarations), so they run at once: the tsc pass is single-threaded and takes most of the time,
// and the others fit on the second core beside it. Each step's output is held and printed in one piece
// when it ends, so the log reads as if they had run one after another. The package check packs dist/,
// so it waits for the build; the tests wait for it too (the threads and processes tiers run dist/), and
// run beside the package check, which mostly waits on npm, attw and publint starting up. The tests'
// output is live; the package check's is printed when the tests end.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
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

/**
 * Runs one step with its output captured; resolves whether it passed, after printing that output
 * (once `printAfter` has resolved, if given).
 */
function step([name, [command, ...args]], printAfter = Promise.resolve()) {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on('close', async (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      await printAfter;
      process.stdout.write(`\n> ${name} (${code === 0 ? 'ok' : `failed, exit ${code}`}, ${seconds} s)\n`);
      process.stdout.write(Buffer.concat(output));
      done(code === 0);
    });
  });
}

/** The command given after this script's name, with its output live; resolves whether it passed. */
function live([name, ...args]) {
  // A package's bin by its name, as npm scripts find it.
  const command = existsSync(bin(name)) ? bin(name) : name;
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit' });
    child.on('error', (error) => {
      console.error(`${name}: ${error.message}`);
      done(false);
    });
    child.on('close', (code) => done(code === 0));
  });
}

const alongside = process.argv.slice(2);
const together = await Promise.all(TOGETHER.map((entry) => step(entry)));
if (together.every(Boolean)) {
  // The tests' output stays in one piece: the package check's is printed once they end.
  let testsEnded;
  const ended = new Promise((resolve) => (testsEnded = resolve));
  const after = Promise.all(AFTER.map((entry) => step(entry, ended)));
  const tests = alongside.length === 0 || (await live(alongside));
  testsEnded();
  if (!tests || !(await after).every(Boolean)) process.exitCode = 1;
} else {
  process.exitCode = 1;
}
