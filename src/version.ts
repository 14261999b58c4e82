/** brood's own version, for the `user-agent` header. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Replaced by the build (tsup `define`), so the library and the CommonJS worker bundle both know it
// without locating files at run time.
declare const __BROOD_VERSION__: string | undefined;

let cached: string | undefined;

export function broodVersion(): string {
  if (typeof __BROOD_VERSION__ === 'string') return __BROOD_VERSION__;
  cached ??= versionFromWorkingTree();
  return cached;
}

export function userAgent(): string {
  return `brood/${broodVersion()}`;
}

/** Unbuilt source (the test suite) runs inside the repository: the nearest package.json named brood. */
function versionFromWorkingTree(): string {
  for (let dir = process.cwd(); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'brood' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      /* no readable package.json here: keep walking */
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
}
