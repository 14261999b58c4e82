/**
 * bench/install-peer.mjs, as `npm run bench` runs it before the suite, in a scratch tree whose bench/
 * package depends on a local tarball (no registry): it installs bench/node_modules when that does not
 * hold what bench/package-lock.json locks, leaves a matching install alone, and lets the bench go on
 * without the peer when the install fails.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ROOT } from '../../support/run-cli.js';
import { npmEnv } from './npm-cache.js';

let tree: string;
let bench: string;
/** npm's environment: a cache of the scratch tree's own, so the stub never lands in the user's cache. */
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  tree = mkdtempSync(join(tmpdir(), 'brood-bench-peer-'));
  bench = join(tree, 'bench');
  env = npmEnv(join(tree, 'npm-cache'));
  mkdirSync(bench);
  copyFileSync(join(ROOT, 'bench/install-peer.mjs'), join(bench, 'install-peer.mjs'));
});

afterEach(() => rmSync(tree, { recursive: true, force: true }));

/** bench/ depends on `stub` at `version` (a tarball packed here); its lockfile is written offline. */
function dependOnStub(version: string): void {
  const source = join(tree, `stub-src-${version}`);
  mkdirSync(source);
  writeFileSync(join(source, 'package.json'), JSON.stringify({ name: 'stub', version, main: 'index.js' }));
  writeFileSync(join(source, 'index.js'), `module.exports = '${version}';\n`);
  execFileSync('npm', ['pack', '--pack-destination', bench], { cwd: source, env, stdio: 'ignore' });
  const dependencies = { stub: `file:stub-${version}.tgz` };
  writeFileSync(join(bench, 'package.json'), JSON.stringify({ name: 'bench', private: true, dependencies }));
  execFileSync('npm', ['install', '--package-lock-only', '--offline', '--no-audit', '--no-fund'], {
    cwd: bench,
    env,
    stdio: 'ignore',
  });
}

function installPeer(): string {
  return execFileSync(process.execPath, [join(bench, 'install-peer.mjs')], {
    cwd: tree,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

const installedVersion = (): string | undefined =>
  existsSync(join(bench, 'node_modules/stub/package.json'))
    ? (JSON.parse(readFileSync(join(bench, 'node_modules/stub/package.json'), 'utf8')) as { version: string }).version
    : undefined;

it('a fresh clone (no bench/node_modules): installs what the lockfile locks', () => {
  dependOnStub('1.0.0');
  expect(installPeer()).toContain("bench: installing the peer's dependencies");
  expect(installedVersion()).toBe('1.0.0');
});

it('leaves a matching install alone, and reinstalls once the lockfile changes', () => {
  dependOnStub('1.0.0');
  installPeer();
  const marker = join(bench, 'node_modules/left-alone');
  writeFileSync(marker, '');
  expect(installPeer()).toContain("bench: the peer's dependencies are installed");
  expect(existsSync(marker)).toBe(true);
  dependOnStub('1.0.1');
  expect(installPeer()).toContain("bench: installing the peer's dependencies");
  expect(installedVersion()).toBe('1.0.1');
});

it('an install that fails leaves the bench to run without the peer (exit 0, one line why)', () => {
  dependOnStub('1.0.0');
  rmSync(join(bench, 'stub-1.0.0.tgz'));
  env = npmEnv(join(tree, 'empty-cache')); // nor is it in the cache: nowhere to install it from
  expect(installPeer()).toMatch(/bench: could not install them \(.+\); the peer's rows are skipped/);
  expect(installedVersion()).toBeUndefined();
});

it('npm run bench installs the peer before it runs the suite', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  expect(scripts.bench).toMatch(/node bench\/install-peer\.mjs && .*bench\/run\.mjs/);
});
