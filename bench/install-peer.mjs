// Installs the benchmark's own dependencies (the peer system, bench/package.json) when bench/node_modules
// does not hold exactly what bench/package-lock.json locks — on a fresh clone, or after the lock changed —
// so `npm run bench` compares against the peer without a manual step. They stay out of the library's
// install (`npm ci` at the root never sees them). `npm ci --prefer-offline` takes tarballs from npm's
// cache where it has them. If the install fails (no network), the bench runs without the peer and
// says so, as it does for a peer that cannot load.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bench = dirname(fileURLToPath(import.meta.url));

/**
 * Lockfile paths whose installed package (its own package.json) is missing or of another version than
 * the locked one; optional packages may be absent (another platform's build).
 */
function missingPackages(dir) {
  const locked = readJson(join(dir, 'package-lock.json'))?.packages ?? {};
  return Object.entries(locked)
    .filter(([path, entry]) => path.startsWith('node_modules/') && entry.optional !== true)
    .filter(([path, entry]) => readJson(join(dir, path, 'package.json'))?.version !== entry.version)
    .map(([path]) => path);
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

const missing = missingPackages(bench);
if (missing.length === 0) {
  console.log("bench: the peer's dependencies are installed");
} else {
  console.log(`bench: installing the peer's dependencies (npm ci in bench/, ${missing.length} packages missing)`);
  try {
    execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: bench,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
  } catch (error) {
    console.log(`bench: could not install them (${error.message.split('\n')[0]}); the peer's rows are skipped`);
  }
}
