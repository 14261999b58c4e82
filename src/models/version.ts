/**
 * brood's own version (package.json's), the one source for the `user-agent` header, ACP's
 * `clientInfo` / `agentInfo` and `brood --version`.
 */
import { readFileSync } from 'node:fs';

// Replaced by the build (tsup `define`), so the library, the bin and the CommonJS thread bundles all
// know it without locating files at run time.
declare const __BROOD_VERSION__: string | undefined;

let cached: string | undefined;

export function broodVersion(): string {
  if (typeof __BROOD_VERSION__ === 'string') return __BROOD_VERSION__;
  cached ??= versionFromSourceTree();
  return cached;
}

export function userAgent(): string {
  return `brood/${broodVersion()}`;
}

/** Unbuilt source (the test suite): the nearest package.json named brood above this module. */
function versionFromSourceTree(): string {
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'brood' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      /* no readable package.json here: keep walking */
    }
    if (new URL('../', dir).href === dir.href) return '0.0.0';
  }
}
