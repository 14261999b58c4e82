/**
 * Pool threads load their bundle through a V8 code cache (src/thread/code-cache.ts). The loader is
 * exercised on a small real bundle (state, file, fallbacks, trust of the directory, other builds), and
 * end to end: real pool threads write the cache once warm, later runtimes read it without rewriting
 * it, and a corrupt cache is replaced.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createBrood } from '../../../src/index.js';
import { cacheFileName, loadCachedBundle, trustedCacheDir } from '../../../src/thread/code-cache.js';
import { route } from '../../support/route.js';

let dir: string;
let bundle: string;
let cacheDir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'brood-code-cache-test-'));
  cacheDir = join(dir, 'cache');
  bundle = join(dir, 'fixture.cjs');
  // Enough functions that compiling them is real work; the exports prove the bundle ran.
  const helpers = Array.from({ length: 50 }, (_, i) => `function f${i}(x) { return x * ${i} + ${i}; }`).join('\n');
  writeFileSync(
    bundle,
    `${helpers}\nexports.sum = (x) => [${Array.from({ length: 50 }, (_, i) => `f${i}`).join(',')}].reduce((s, f) => s + f(x), 0);\nexports.file = __filename;\n`,
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const expectedSum = (x: number) => Array.from({ length: 50 }, (_, i) => x * i + i).reduce((s, v) => s + v, 0);
const cacheFiles = () => readdirSync(cacheDir).filter((name) => name.endsWith('.cache'));

it('a first load finds no cache and runs the bundle; save() writes one private file; the next load accepts it', () => {
  const first = loadCachedBundle(bundle, { buildId: 'b1', setting: cacheDir });
  expect(first.state).toBe('missing');
  expect((first.exports.sum as (x: number) => number)(3)).toBe(expectedSum(3));
  expect(first.exports.file).toBe(bundle);
  expect(cacheFiles()).toEqual([]);
  first.save();
  first.save(); // once only
  expect(cacheFiles()).toEqual([cacheFileName(bundle, 'b1')]);
  const written = statSync(join(cacheDir, cacheFileName(bundle, 'b1')));
  if (process.getuid) expect(written.mode & 0o777).toBe(0o600);
  expect(readdirSync(cacheDir).filter((name) => name.endsWith('.tmp'))).toEqual([]);

  const second = loadCachedBundle(bundle, { buildId: 'b1', setting: cacheDir });
  expect(second.state).toBe('accepted');
  expect((second.exports.sum as (x: number) => number)(5)).toBe(expectedSum(5));
  second.save(); // an accepted cache is not rewritten
  expect(statSync(join(cacheDir, cacheFileName(bundle, 'b1'))).ino).toBe(written.ino);
});

it('a corrupt cache is rejected by V8, the bundle still runs, and save() replaces it', () => {
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(cacheDir, cacheFileName(bundle, 'b1')), Buffer.from('not a code cache at all'.repeat(40)));
  const loaded = loadCachedBundle(bundle, { buildId: 'b1', setting: cacheDir });
  expect(loaded.state).toBe('rejected');
  expect((loaded.exports.sum as (x: number) => number)(2)).toBe(expectedSum(2));
  loaded.save();
  expect(loadCachedBundle(bundle, { buildId: 'b1', setting: cacheDir }).state).toBe('accepted');
});

it("another build's cache is never read; old builds' caches are pruned to the newest few", () => {
  loadCachedBundle(bundle, { buildId: 'old', setting: cacheDir }).save();
  expect(loadCachedBundle(bundle, { buildId: 'new', setting: cacheDir }).state).toBe('missing');
  for (let i = 0; i < 6; i++) {
    const name = `fixture-stale${i}-${process.version}-${process.arch}-00000000.cache`;
    writeFileSync(join(cacheDir, name), 'x');
    utimesSync(join(cacheDir, name), 1_000 + i, 1_000 + i); // older than 'old'
  }
  loadCachedBundle(bundle, { buildId: 'new', setting: cacheDir }).save();
  const left = cacheFiles();
  expect(left).toContain(cacheFileName(bundle, 'new'));
  expect(left).toContain(cacheFileName(bundle, 'old')); // the newest other builds stay
  expect(left).toHaveLength(5); // this build + the 4 newest others
  expect(left).not.toContain(`fixture-stale0-${process.version}-${process.arch}-00000000.cache`);
});

it('BROOD_CODE_CACHE=0 turns the cache off: nothing is read or written', () => {
  const loaded = loadCachedBundle(bundle, { buildId: 'b1', setting: '0' });
  expect(loaded.state).toBe('off');
  loaded.save();
  expect(() => readdirSync(cacheDir)).toThrow();
  expect((loaded.exports.sum as (x: number) => number)(1)).toBe(expectedSum(1));
});

it.runIf(typeof process.getuid === 'function')('a directory others can write to is not trusted with bytecode', () => {
  mkdirSync(cacheDir, { recursive: true });
  chmodSync(cacheDir, 0o777);
  expect(trustedCacheDir(cacheDir)).toBeUndefined();
  const loaded = loadCachedBundle(bundle, { buildId: 'b1', setting: cacheDir });
  expect(loaded.state).toBe('off');
  loaded.save();
  expect(cacheFiles()).toEqual([]);
  chmodSync(cacheDir, 0o700);
  expect(trustedCacheDir(cacheDir)).toBe(cacheDir);
});

// ——— end to end, real pool threads ———

const driverCaches = () =>
  readdirSync(cacheDir).filter((name) => name.startsWith('driver-') && name.endsWith('.cache'));

/**
 * Runs one turn on a fresh one-thread runtime, then keeps it open until `until()` holds (polled; a
 * pool thread counts as warm half a second after its last activation ended) or `settleMs` passed.
 */
async function runOnce(until: () => boolean, settleMs = 10_000): Promise<void> {
  const brood = createBrood({ pool: { threads: 1 } });
  try {
    const agent = await brood.createAgent({ model: route });
    expect(await agent.run('cache me')).toMatchObject({ stopReason: 'completed', output: 'cache me' });
    await agent.whenIdle();
    const deadline = Date.now() + settleMs;
    while (!until() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    await brood.close();
  }
}

const inode = (file: string): number | undefined => {
  try {
    return statSync(file).ino;
  } catch {
    return undefined;
  }
};

async function withSetting(value: string, body: () => Promise<void>): Promise<void> {
  const before = process.env.BROOD_CODE_CACHE;
  process.env.BROOD_CODE_CACHE = value; // pool threads copy the environment when they start
  try {
    await body();
  } finally {
    if (before === undefined) delete process.env.BROOD_CODE_CACHE;
    else process.env.BROOD_CODE_CACHE = before;
  }
}

it('a warm pool thread writes the cache; the next runtime reads it and does not rewrite it', async () => {
  await withSetting(cacheDir, async () => {
    await runOnce(() => existsSync(cacheDir) && driverCaches().length > 0);
    expect(driverCaches()).toHaveLength(1);
    const file = join(cacheDir, driverCaches()[0] as string);
    const written = inode(file);
    // Accepted at load, so never saved: past the warm moment (0.5 s) the file is still the same one.
    await runOnce(() => inode(file) !== written, 2_000);
    expect(driverCaches()).toHaveLength(1);
    expect(inode(file)).toBe(written);
  });
});

it('a corrupt cache file does not stop a runtime: its thread runs and replaces the file', async () => {
  await withSetting(cacheDir, async () => {
    await runOnce(() => existsSync(cacheDir) && driverCaches().length > 0);
    const file = join(cacheDir, driverCaches()[0] as string);
    writeFileSync(file, Buffer.alloc(4096, 7));
    const corrupt = inode(file);
    await runOnce(() => inode(file) !== corrupt);
    expect(inode(file)).not.toBe(corrupt);
    expect(statSync(file).size).toBeGreaterThan(4096);
  });
});
