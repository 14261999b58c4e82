// `npm pack` of the built tree, exactly as `npm publish` would pack it (the files list, the exports
// map, the declarations), with --ignore-scripts: the caller has just built dist/, and prepack's clean
// build is for publishing. Shared by `npm test` (scripts/checks.mjs packs once, for the package check
// and the tarball test) and `npm run check:package` run alone.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** Packs the package at `root` into `destination`; resolves with the tarball's path and npm's record of it. */
export async function packPackage(root, destination) {
  const { stdout } = await promisify(execFile)(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', destination],
    { cwd: root, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'error' } },
  );
  const [packed] = JSON.parse(stdout);
  return { tarball: join(destination, packed.filename), ...packed };
}

/** One line on what was packed: `brood-0.1.0.tgz, 348 files, 1192 KB packed`. */
export function packedSummary(packed) {
  return `${packed.filename}, ${packed.entryCount} files, ${Math.round(packed.size / 1024)} KB packed`;
}
