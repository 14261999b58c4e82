/**
 * bench/build-if-stale.mjs, as `npm start` (`--js-only`) and `npm run bench` run it, in a scratch tree
 * whose `npm run build` only records what it was asked for: declarations are built whenever they are
 * missing, and `--js-only` skips them only while an earlier build's are there.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../support/run-cli.js';

// The stand-in build writes dist/index.js, and dist/index.d.ts unless told BROOD_BUILD_DTS=0 (as tsup.config.ts does).
const RECORDING_BUILD = `
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
const declarations = process.env.BROOD_BUILD_DTS !== '0';
mkdirSync('dist', { recursive: true });
writeFileSync('dist/index.js', '');
if (declarations) writeFileSync('dist/index.d.ts', '');
appendFileSync('builds.log', declarations ? 'full\\n' : 'js-only\\n');
`;

let tree: string;

beforeEach(() => {
  tree = mkdtempSync(join(tmpdir(), 'brood-stale-'));
  mkdirSync(join(tree, 'bench'));
  mkdirSync(join(tree, 'src'));
  copyFileSync(join(ROOT, 'bench/build-if-stale.mjs'), join(tree, 'bench/build-if-stale.mjs'));
  writeFileSync(join(tree, 'record-build.mjs'), RECORDING_BUILD);
  writeFileSync(
    join(tree, 'package.json'),
    JSON.stringify({ name: 'scratch', scripts: { build: 'node record-build.mjs' } }),
  );
  writeFileSync(join(tree, 'src/index.ts'), 'export {};\n');
  age(join(tree, 'package.json'), 120);
  age(join(tree, 'src/index.ts'), 120);
  age(join(tree, 'src'), 120);
});

afterEach(() => rmSync(tree, { recursive: true, force: true }));

/** Sets a file's times `seconds` into the past, so what is written next is newer. */
function age(path: string, seconds: number): void {
  const then = new Date(Date.now() - seconds * 1000);
  utimesSync(path, then, then);
}

function built(seconds: number, declarations: boolean): void {
  mkdirSync(join(tree, 'dist'), { recursive: true });
  writeFileSync(join(tree, 'dist/index.js'), '');
  age(join(tree, 'dist/index.js'), seconds);
  if (declarations) {
    writeFileSync(join(tree, 'dist/index.d.ts'), '');
    age(join(tree, 'dist/index.d.ts'), seconds);
  }
}

function run(...args: string[]): string[] {
  execFileSync(process.execPath, [join(tree, 'bench/build-if-stale.mjs'), ...args], {
    cwd: tree,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  const log = join(tree, 'builds.log');
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
}

describe('build-if-stale', () => {
  it('npm start on a JavaScript-only build (no declarations) builds the declarations', () => {
    built(60, false);
    expect(run('--js-only')).toEqual(['full']);
    expect(existsSync(join(tree, 'dist/index.d.ts'))).toBe(true);
  });

  it('npm start on a fresh clone (no dist/) builds everything', () => {
    expect(run('--js-only')).toEqual(['full']);
  });

  it('npm start after a source change builds JavaScript only while declarations exist', () => {
    built(180, true);
    expect(run('--js-only')).toEqual(['js-only']);
  });

  it('nothing is built when dist/ is newer than its sources and has its declarations', () => {
    built(60, true);
    expect(run('--js-only')).toEqual([]);
    expect(run()).toEqual([]);
  });

  it('the bench builds declarations too when they are missing', () => {
    built(60, false);
    expect(run()).toEqual(['full']);
  });
});
