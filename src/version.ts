/**
 * brood's own version, from one place: the model adapters' `user-agent`, the ACP `clientInfo` and
 * `agentInfo`, the MCP `clientInfo` and `brood --version` all read it here.
 */
import { readFileSync } from 'node:fs';

// Replaced by the build (tsup `define`), so the library, the CLI and the CommonJS thread bundles all
// know it without locating files at run time.
declare const __BROOD_VERSION__: string | undefined;

let cached: string | undefined;

export function broodVersion(): string {
  if (typeof __BROOD_VERSION__ === 'string') return __BROOD_VERSION__;
  cached ??= versionBesideSource();
  return cached;
}

/** Unbuilt source (the test suite): the package.json one level above src/. */
function versionBesideSource(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      name?: unknown;
      version?: unknown;
    };
    if (pkg.name === 'brood' && typeof pkg.version === 'string') return pkg.version;
  } catch {
    // Not there: the version is unknown.
  }
  return '0.0.0';
}
