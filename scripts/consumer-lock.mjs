// A lockfile for a project that installs the packed package, derived from this checkout's own
// package-lock.json: the packed tarball at node_modules/brood and the closure of its dependencies, each
// at the version, integrity and place the checkout resolved. With it, `npm ci` downloads tarballs only
// and never the package documents (packuments) an install without a lockfile must read to resolve
// ranges. The repository's own install fetches exactly those tarballs (into npm's cache), so the
// packaging test installs the tarball without the network where that cache is intact, and with it
// (tarballs only) where it is not — never depending on packuments something else happened to cache.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const REGISTRY = 'https://registry.npmjs.org';

/**
 * The `package.json` and `package-lock.json` of a project named `name`, in directory `project`, whose
 * only dependency is the packed `tarball` of the checkout at `root`.
 */
export function consumerProject(root, { name, project, tarball }) {
  const tarballSpec = `file:${relative(project, tarball)}`;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  const rootLock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const packages = closure(rootLock.packages, pkg.dependencies ?? {});
  const brood = {
    version: pkg.version,
    resolved: tarballSpec,
    integrity,
    license: pkg.license,
    dependencies: pkg.dependencies,
    peerDependencies: pkg.peerDependencies,
    peerDependenciesMeta: pkg.peerDependenciesMeta,
    bin: pkg.bin,
    engines: pkg.engines,
  };
  const dependencies = { [pkg.name]: tarballSpec };
  return {
    packageJson: { name, private: true, type: 'module', dependencies },
    packageLock: {
      name,
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name, dependencies }, [`node_modules/${pkg.name}`]: brood, ...packages },
    },
  };
}

/**
 * The lockfile entries of everything `dependencies` needs at run time, found as Node finds them from the
 * checkout's root (nearest node_modules first). A package is optional when only optional dependencies
 * lead to it (a platform's native build: npm skips it elsewhere); dev-only flags are dropped, and each
 * entry gets its registry tarball URL, which the checkout's lockfile leaves out.
 */
function closure(lockPackages, dependencies) {
  const required = new Map(); // lockfile path -> reached by a chain of required edges
  const queue = Object.keys(dependencies).map((dependency) => ({ from: '', dependency, optional: false }));
  while (queue.length > 0) {
    const { from, dependency, optional } = queue.shift();
    const path = locate(lockPackages, from, dependency);
    if (path === undefined) {
      if (optional) continue;
      throw new Error(`package-lock.json has no ${dependency} for ${from || 'the root'}: run npm install`);
    }
    const known = required.get(path);
    if (known === true || (known === false && optional)) continue;
    required.set(path, !optional);
    const entry = lockPackages[path];
    for (const name of Object.keys(entry.dependencies ?? {})) queue.push({ from: path, dependency: name, optional });
    for (const name of Object.keys(entry.optionalDependencies ?? {})) {
      queue.push({ from: path, dependency: name, optional: true });
    }
  }
  const entries = [...required].sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(
    entries.map(([path, isRequired]) => [path, runtimeEntry(lockPackages[path], path, isRequired)]),
  );
}

/** Where Node resolves `name` from the package at lockfile path `from`: its own node_modules, then each parent's. */
function locate(lockPackages, from, name) {
  let base = from;
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (lockPackages[candidate] !== undefined) return candidate;
    if (base === '') return undefined;
    const parent = base.lastIndexOf('/node_modules/');
    base = parent === -1 ? '' : base.slice(0, parent);
  }
}

function runtimeEntry(entry, path, isRequired) {
  const { dev, devOptional, peer, optional, ...rest } = entry;
  const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  const resolved = entry.resolved ?? `${REGISTRY}/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
  return { ...rest, resolved, ...(isRequired ? {} : { optional: true }) };
}
