import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

type Plugin = NonNullable<Options['esbuildPlugins']>[number];

// brood's version, for every module that reports it (src/version.ts), and the optional peers.
const { version, peerDependencies } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
  peerDependencies: Record<string, string>;
};
// The optional peers (MCP SDK, ACP SDK, bullmq, ioredis) are never bundled: a host installs them only
// for the feature that needs them, and brood reaches them only through import() (src/util/optional-peers.ts).
const optionalPeers = Object.keys(peerDependencies); // a name also matches its subpaths
const define = { __BROOD_VERSION__: JSON.stringify(version) };
// Names this build's pool-thread code cache (src/thread/code-cache.ts): a cache is read only by the
// build that wrote it. The pool entry and the driver bundle are always built together, in this run.
const buildId = randomBytes(6).toString('hex');

/** Thread bundles load zod's English locale only (see workers/zod-locales.ts). */
const englishOnlyZod: Plugin = {
  name: 'english-only-zod',
  setup(build) {
    const stub = fileURLToPath(new URL('./workers/zod-locales.ts', import.meta.url));
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${sep}zod${sep}`) ? { path: stub } : undefined,
    );
  },
};

/**
 * The pool thread evaluates zod on first use, not at boot, and does not even read it then: `zod`
 * imported by brood's sources resolves to workers/zod-on-demand.ts, which `require()`s zod's own
 * bundle (dist/workers/zod.cjs, built below) on the first read of `z`. zod's modules were the largest
 * part of a thread's boot (evaluation, and reading and compiling ~0.4 MB of source); a thread needs
 * zod only to word a rejection or on a rare path.
 */
const zodOnDemand: Plugin = {
  name: 'zod-on-demand',
  setup(build) {
    const shim = fileURLToPath(new URL('./workers/zod-on-demand.ts', import.meta.url));
    build.onResolve({ filter: /^zod$/ }, (args) =>
      args.importer.includes(`${sep}node_modules${sep}`) ? undefined : { path: shim },
    );
    build.onResolve({ filter: /^\.\/zod\.cjs$/ }, (args) =>
      args.importer === shim ? { path: args.path, external: true } : undefined,
    );
  },
};

/**
 * comlink names each call with four random 53-bit numbers printed in hex (`generateUUID`); in a pool
 * thread that was ~10 % of the CPU of a tool round trip. An id only has to be unique among one
 * endpoint's pending calls, so the thread bundles count instead. The build fails if comlink's source
 * no longer has the function (an upgrade must look at this again).
 */
const countedComlinkIds: Plugin = {
  name: 'counted-comlink-ids',
  setup(build) {
    build.onLoad({ filter: /[\\/]comlink[\\/]dist[\\/].*comlink\.m?js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const uuid = /function generateUUID\(\) \{[^}]*\}/;
      if (!uuid.test(source)) throw new Error(`comlink's generateUUID() not found in ${args.path}`);
      const counted = 'let callCount = 0;\nfunction generateUUID() {\n  return (++callCount).toString(36);\n}';
      return { contents: source.replace(uuid, counted), loader: 'js' };
    });
  },
};

/** A thread entry `workers/<name>.ts` as one self-contained CommonJS file; only `external` stays out. */
function threadBundle(
  name: string,
  external: string,
  extraDefine: Record<string, string> = {},
  plugins: Plugin[] = [englishOnlyZod, zodOnDemand, countedComlinkIds],
): Options {
  return {
    entry: { [`workers/${name}`]: `workers/${name}.ts` },
    format: ['cjs'],
    outExtension: () => ({ js: '.cjs' }),
    target: 'node20',
    platform: 'node',
    sourcemap: true,
    clean: false,
    splitting: false,
    shims: false,
    define: { ...define, ...extraDefine },
    noExternal: [new RegExp(`^(?!${external}$)`)],
    external: [external],
    esbuildPlugins: plugins,
    esbuildOptions(options) {
      // Modules bundled here and into the ES chunks read `__filename` first where it exists
      // (src/code-mode/sandbox-pool.ts); their `import.meta` fallback is for the ES build only.
      options.logOverride = { ...options.logOverride, 'empty-import-meta': 'silent' };
    },
  };
}

// Library entries and the worker entry are built together; the worker is located at run time relative
// to the built module (`new URL('./workers/driver.cjs', import.meta.url)`), so it must land in dist/workers.
export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      testing: 'src/testing.ts',
      // The `brood` bin; src/cli/main.ts starts with a hashbang, which esbuild keeps.
      'cli/main': 'src/cli/main.ts',
    },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    external: optionalPeers,
    // Declarations come from the tsc pass that type-checks the tree (scripts/declarations.mjs, run by
    // `npm run build` after tsup), not from a second check here.
    dts: false,
    sourcemap: true,
    clean: false, // parallel test runs keep loading dist/workers while a rebuild writes it
    splitting: true,
    shims: false,
    define,
  },
  // The pool thread entry: ONE self-contained CommonJS file. Piscina loads its entry with require();
  // on Node >= 20.19 requiring an ES module goes through require(esm), and a thread terminated while
  // that synchronous ESM instantiation runs aborts the whole process (v8 FATAL in
  // ModuleWrap::InstantiateSync). A CommonJS bundle never instantiates an ES module at load time, and
  // it boots faster (one file, no module graph). Only piscina stays external: the entry must share
  // piscina's own module instance to read the pool's workerData. Adapter modules of kind 'module'
  // are still loaded with a real dynamic import() at task time, which is asynchronous and safe.
  threadBundle('driver', 'piscina'),
  // zod for the pool thread, required by workers/zod-on-demand.ts only when a thread needs it.
  threadBundle('zod', 'piscina', {}, [englishOnlyZod]),
  // What piscina loads: the driver bundle above, through a V8 code cache (workers/pool-entry.ts).
  threadBundle('pool-entry', 'piscina', { __BROOD_BUILD_ID__: JSON.stringify(buildId) }),
  // The run_code sandbox thread entry (src/code-mode/sandbox-pool.ts starts it): CommonJS for the same
  // reason as the pool entry. The QuickJS engine stays external: it locates its .wasm file next to
  // its own module, and it is loaded with import() only once the thread runs.
  threadBundle('sandbox', 'quickjs-emscripten'),
]);
