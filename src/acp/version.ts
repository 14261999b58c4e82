/** brood's package version, for ACP `clientInfo` / `agentInfo` (read once, from the package's own package.json). */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function broodVersion(): string {
  if (cached !== undefined) return cached;
  cached = '0.0.0';
  // Built code lives in dist/ (one level down), sources in src/acp/ (two levels down).
  for (const relative of ['../package.json', '../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'brood' && typeof pkg.version === 'string') {
        cached = pkg.version;
        break;
      }
    } catch {
      // Not there: try the next level.
    }
  }
  return cached;
}
