/**
 * Loads a thread bundle (one CommonJS file) through a V8 code cache. A pool thread's boot is mostly
 * compiling its ~0.5 MB bundle and then lazily compiling the driver's functions on the first
 * activations; with the cache V8 deserializes bytecode instead (measured on the 2-core machine: the
 * bundle's load 58–62 ms → ~25 ms per thread; the first fan-out of a fresh runtime costs ~0.1 s less).
 *
 * The cache is written once per bundle build and V8 flag set, by a thread that has run activations
 * (so it holds the driver's hot functions, not just the top level), into a private directory:
 * `BROOD_CODE_CACHE=<dir>` places it, `BROOD_CODE_CACHE=0` turns it off, the default is
 * `<tmpdir>/brood-code-cache-<uid>`. Bytecode from a directory others can write would be code they
 * control, so a directory not owned by this user or writable by group/others is not used. V8 checks
 * its own version, flags and the source length and rejects a cache that does not match; the file
 * name adds the build id (the bundle's content) and this process's flags, so a mismatch is rare and
 * only ever costs a normal compile.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** What happened to the cache when the bundle loaded. */
export type CodeCacheState = 'accepted' | 'rejected' | 'missing' | 'off';

export interface CachedBundle {
  /** The bundle's `module.exports`. */
  exports: Record<string, unknown>;
  state: CodeCacheState;
  /** Writes the cache from what is compiled now, unless one was accepted at load (once; never throws). */
  save(): void;
}

export interface CodeCacheOptions {
  /** Identifies the bundle's content (a build id); part of the cache file's name. */
  buildId: string;
  /** The BROOD_CODE_CACHE setting; `undefined` means the default directory. */
  setting?: string | undefined;
}

/** Caches of other builds are pruned when a new one is written, beyond this many per bundle. */
const KEEP_OTHER_BUILDS = 4;

export function loadCachedBundle(file: string, options: CodeCacheOptions): CachedBundle {
  const source = readFileSync(file, 'utf8');
  const dir = trustedCacheDir(options.setting);
  const cacheFile = dir && join(dir, cacheFileName(file, options.buildId));
  const cachedData = cacheFile ? readIfPresent(cacheFile) : undefined;
  const script = new Script(wrap(source), { filename: file, cachedData });
  const state: CodeCacheState = !cacheFile
    ? 'off'
    : cachedData === undefined
      ? 'missing'
      : script.cachedDataRejected
        ? 'rejected'
        : 'accepted';
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  let saved = state === 'accepted' || state === 'off';
  return {
    exports: module.exports,
    state,
    save() {
      if (saved || !cacheFile) return;
      saved = true;
      writeCache(cacheFile, script);
    },
  };
}

/** `<bundle>-<build>-<node version, arch, V8 flags>.cache`: V8 rejects a cache made under other flags. */
export function cacheFileName(file: string, buildId: string): string {
  const flags = `${process.execArgv.join(' ')}\0${process.env.NODE_OPTIONS ?? ''}`;
  const runtime = `${process.version}-${process.arch}-${fnv1a(flags)}`;
  return `${basename(file, '.cjs')}-${buildId}-${runtime}.cache`;
}

/** The cache directory, or undefined when caching is off or the directory cannot be trusted. */
export function trustedCacheDir(setting: string | undefined): string | undefined {
  if (setting === '0' || setting === 'off' || setting === 'false') return undefined;
  const uid = process.getuid?.();
  const dir = setting || join(tmpdir(), `brood-code-cache-${uid ?? 'user'}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = statSync(dir);
    if (!stat.isDirectory()) return undefined;
    if (uid !== undefined && (stat.uid !== uid || (stat.mode & 0o022) !== 0)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Atomic: a reader sees the old file or the whole new one, never a torn write. */
function writeCache(cacheFile: string, script: Script): void {
  const temp = `${cacheFile}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, cacheFile);
    pruneOtherBuilds(cacheFile);
  } catch {
    rmSync(temp, { force: true });
  }
}

/** Keeps the newest few caches of other builds of the same bundle (a rebuild leaves the old one behind). */
function pruneOtherBuilds(cacheFile: string): void {
  const dir = dirname(cacheFile);
  const bundle = basename(cacheFile).split('-')[0];
  const others = readdirSync(dir)
    .filter((name) => name.startsWith(`${bundle}-`) && name.endsWith('.cache') && join(dir, name) !== cacheFile)
    .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of others.slice(KEEP_OTHER_BUILDS)) rmSync(old.path, { force: true });
}

/**
 * 32-bit FNV-1a, hex: a short, stable name for a flag set (not a security boundary). Not node:crypto
 * as elsewhere in brood: this runs at every pool thread's boot, where nothing else loads crypto and
 * loading it was measured at ~3.5 ms per thread.
 */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
