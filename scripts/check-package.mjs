#!/usr/bin/env node
// Package check: lints the packed package with @arethetypeswrong/cli (`--profile esm-only`: no problem
// allowed) and publint (`--strict`: no error, no warning). `node scripts/check-package.mjs <tarball>`
// checks a tarball already packed (`npm test` packs once, for this check and the tarball test:
// scripts/checks.mjs); without one it packs the built tree itself (scripts/pack.mjs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packedSummary, packPackage } from './pack.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const given = process.argv[2];
const dir = given === undefined ? mkdtempSync(join(tmpdir(), 'brood-check-package-')) : undefined;
try {
  const tarball = given ?? (await packedHere(dir));
  execFileSync(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'table-flipped', '--no-emoji'], {
    stdio: 'inherit',
  });
  execFileSync(bin('publint'), ['run', tarball, '--strict'], { stdio: 'inherit' });
  console.log(`check:package: ${basename(tarball)} passed attw and publint`);
} catch (error) {
  console.error(`check:package: failed (${error instanceof Error ? error.message.split('\n')[0] : error})`);
  process.exitCode = 1;
} finally {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}

async function packedHere(destination) {
  const packed = await packPackage(root, destination);
  console.log(`check:package: ${packedSummary(packed)}`);
  return packed.tarball;
}
