/** brood's own version, for the `user-agent` header; read once from the package.json above this module. */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

/**
 * Walks up from this module (src/models in development, dist/ or dist/workers when built) to the first
 * package.json named brood, so the source tree and the published package report the same version.
 */
export function broodVersion(): string {
  if (cached !== undefined) return cached;
  cached = '0.0.0';
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'brood' && typeof pkg.version === 'string') {
        cached = pkg.version;
        break;
      }
    } catch {
      /* no readable package.json here: keep walking */
    }
    if (new URL('../', dir).href === dir.href) break;
  }
  return cached;
}

export function userAgent(): string {
  return `brood/${broodVersion()}`;
}
