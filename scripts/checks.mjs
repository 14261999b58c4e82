#!/usr/bin/env node
// `npm test` up to its tests: the lint, the import check, the build (tsup's JavaScript and the tsc
// pass that type-checks the tree and writes the declarations), then the package check — and, with a
// command after its name (`node scripts/checks.mjs vitest run …`), that command beside them.
//
// The run is CPU-bound on two cores, so nothing waits that need not:
// - The lint, the import check, tsup and the tsc pass only read the tree or write disjoint files of
//   dist/ (tsup the JavaScript, the tsc pass the declarations), so they start at once.
// - The tests start as soon as tsup has written the JavaScript: the threads and processes tiers run
//   dist/, not its declarations. The single-threaded tsc pass (the longest step) runs beside them.
//   The two test files that read dist's declarations (the packed tarball's consumer and the docs'
//   type check) wait for the tsc pass: this script names a file in BROOD_DECLARATIONS_STAMP and
//   writes `ok` or `failed` into it when that pass ends (test/support/run-cli.ts, declarationsBuilt).
// - The package is packed once, when both build steps have ended, for the package check and the
//   tarball test (which installs it): its path is written into the file named in BROOD_PACKAGE_STAMP
//   (`failed` if the pack or the build failed; test/support/run-cli.ts, packedByChecks).
// Each step's output is held and printed in one piece; the tests' output is live, and the steps that
// end while the tests run are printed once the tests end, so the log reads as one step after another.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packedSummary, packPackage } from './pack.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const script = (name) => [process.execPath, join(root, 'scripts', name)];

const LINT = ['lint', [bin('biome'), 'check', '.']];
const IMPORTS = ['check:imports', script('check-imports.mjs')];
const JAVASCRIPT = ['build: JavaScript (tsup)', [bin('tsup')]];
const DECLARATIONS = ['build: types and declarations (tsc)', script('declarations.mjs')];

/** Runs one step with its output captured; resolves with whether it passed and a `print()` of its output. */
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
      const print = () => {
        process.stdout.write(`\n> ${name} (${code === 0 ? 'ok' : `failed, exit ${code}`}, ${seconds} s)\n`);
        process.stdout.write(Buffer.concat(output));
      };
      done({ ok: code === 0, print });
    });
  });
}

/** The command given after this script's name, with its output live; resolves whether it passed. */
function live([name, ...args], env) {
  // A package's bin by its name, as npm scripts find it.
  const command = existsSync(bin(name)) ? bin(name) : name;
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('error', (error) => {
      console.error(`${name}: ${error.message}`);
      done(false);
    });
    child.on('close', (code) => done(code === 0));
  });
}

/** Writes a stamp file for the tests; renamed into place, so a test that sees the file reads all of it. */
function writeStamp(file, content) {
  writeFileSync(`${file}.tmp`, content);
  renameSync(`${file}.tmp`, file);
}

/** Packs the built tree once (stamped for the tarball test), then runs the package check on that tarball. */
async function packageCheck(packStamp) {
  let packed;
  try {
    packed = await packPackage(root, dirname(packStamp));
  } catch (error) {
    writeStamp(packStamp, 'failed');
    const message = `npm pack failed: ${error instanceof Error ? error.message : error}\n`;
    return { ok: false, print: () => process.stdout.write(`\n> check:package (failed)\n${message}`) };
  }
  writeStamp(packStamp, packed.tarball);
  return step([`check:package (${packedSummary(packed)})`, [...script('check-package.mjs'), packed.tarball]]);
}

const tests = process.argv.slice(2);
const stampDir = mkdtempSync(join(tmpdir(), 'brood-checks-'));
const stamp = join(stampDir, 'declarations');
const packStamp = join(stampDir, 'package');
try {
  const checks = [step(LINT), step(IMPORTS)];
  const declarations = step(DECLARATIONS).then((result) => {
    writeStamp(stamp, result.ok ? 'ok' : 'failed');
    return result;
  });
  const javascript = await step(JAVASCRIPT);
  javascript.print();
  let passed = javascript.ok;
  if (javascript.ok) {
    const packaged = declarations.then((result) => {
      if (result.ok) return packageCheck(packStamp);
      writeStamp(packStamp, 'failed');
      return undefined;
    });
    const env = { BROOD_DECLARATIONS_STAMP: stamp, BROOD_PACKAGE_STAMP: packStamp };
    if (tests.length > 0) passed = await live(tests, env);
    for (const result of await Promise.all([...checks, declarations, packaged])) {
      result?.print();
      if (result !== undefined && !result.ok) passed = false;
    }
  } else {
    for (const result of await Promise.all([...checks, declarations])) result.print();
  }
  if (!passed) process.exitCode = 1;
} finally {
  rmSync(stampDir, { recursive: true, force: true });
}
