/**
 * An npm cache as a machine has it after nothing but the repository's own install: the tarballs that
 * install fetched, and no package documents (packuments). It is seeded from the user's npm cache, by
 * the tarballs' integrity (cacache stores content under `content-v2/<algorithm>/<hex digest>`, and npm
 * finds a locked tarball by its integrity); a tarball the user's cache lacks is left out and the
 * install downloads it.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function npmEnv(cache?: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    npm_config_update_notifier: 'false',
    npm_config_loglevel: 'error',
    ...(cache === undefined ? {} : { npm_config_cache: cache }),
  };
}

/** A new npm cache at `cache` holding the user's cached tarballs of every entry of `lockPackages` that has one. */
export function tarballOnlyCache(cache: string, lockPackages: Record<string, { integrity?: string }>): void {
  const from = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8', env: npmEnv() }).trim();
  for (const { integrity } of Object.values(lockPackages)) {
    const path = integrity === undefined ? undefined : contentPath(integrity);
    if (path === undefined || !existsSync(join(from, path))) continue;
    mkdirSync(dirname(join(cache, path)), { recursive: true });
    copyFileSync(join(from, path), join(cache, path));
  }
}

/** Every key in the npm cache at `cache` (`npm cache ls`): request URLs, tarballs and package documents alike. */
export function cachedKeys(cache: string): string[] {
  return execFileSync('npm', ['cache', 'ls'], { encoding: 'utf8', env: npmEnv(cache) })
    .split('\n')
    .filter((line) => line !== '');
}

function contentPath(integrity: string): string | undefined {
  const [first = ''] = integrity.split(' '); // the strongest hash comes first
  const dash = first.indexOf('-');
  const [algorithm, digest] = [first.slice(0, dash), first.slice(dash + 1)];
  if (dash <= 0 || digest === '') return undefined;
  const hex = Buffer.from(digest, 'base64').toString('hex');
  return join('_cacache/content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}
