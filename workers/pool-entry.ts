// The file piscina loads in every pool thread: the driver bundle (driver.cjs) through a V8 code cache
// (src/thread/code-cache.ts). Once the thread has run activations and gone idle, the bundle's driver
// host asks for the cache to be written, so the next thread boots from compiled bytecode.
import { join } from 'node:path';
import { loadCachedBundle } from '../src/thread/code-cache.js';

/** Set by tsup for each build: a cache is only ever read by the build that wrote it. */
declare const __BROOD_BUILD_ID__: string;

const bundle = loadCachedBundle(join(__dirname, 'driver.cjs'), {
  buildId: __BROOD_BUILD_ID__,
  setting: process.env.BROOD_CODE_CACHE,
});
// The bundle's own `import()` has no loader behind it under vm.Script on Node 20; this module's has.
const useModuleImporter = bundle.exports.useModuleImporter as (importer: (url: string) => Promise<unknown>) => void;
useModuleImporter((url) => import(url));
const whenWarm = bundle.exports.whenWarm as ((save: () => void) => void) | undefined;
whenWarm?.(() => bundle.save());

export default bundle.exports.default;
