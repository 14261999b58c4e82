// Rebuilds dist/ only when a build input is newer than the built entry, so `npm run bench -- --quick`
// (and `npm start`) stay inside their time budget when nothing changed (a tsup build alone takes ~25 s on 2 cores).
// Missing type declarations are always built: without them a package packed or a host compiled
// against this tree has no types.

import { execSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const inputs = ['src', 'workers', 'package.json', 'tsup.config.ts', 'tsconfig.json'];

function newest(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const built = statSync(join(root, 'dist/index.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
const declared = statSync(join(root, 'dist/index.d.ts'), { throwIfNoEntry: false }) !== undefined;
const source = Math.max(...inputs.map((p) => newest(join(root, p))));
// `--js-only` (npm start): the demo needs no type declarations, which are most of a build's time; it
// skips them only while an earlier build's are there.
const jsOnly = process.argv.includes('--js-only') && declared;
const who = process.argv.includes('--js-only') ? 'start' : 'bench';
if (source > built || !declared) {
  const why = declared ? 'dist/ is older than its sources' : 'dist/ has no type declarations';
  console.log(`${who}: ${why}, building${jsOnly ? ' (JavaScript only)' : ''}`);
  execSync('npm run build', {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...(jsOnly ? { BROOD_BUILD_DTS: '0' } : {}) },
  });
} else {
  console.log(`${who}: dist/ is up to date`);
}
