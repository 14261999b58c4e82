/**
 * The package a host installs: `npm pack` of the built tree, installed into an empty project that has
 * none of the optional peers (the MCP SDK, the ACP SDK, bullmq, ioredis). The install stays small, a
 * strict TypeScript host compiles against the published declarations without skipLibCheck (so they
 * must not need an optional peer's types) and runs a delegation, and every optional feature reports
 * MISSING_DEPENDENCY where it is configured.
 *
 * The project gets a lockfile derived from the checkout's own (scripts/consumer-lock.mjs), so `npm ci`
 * needs the packages' tarballs only, never their package documents. It installs with a cache as a
 * machine has it after only the repository's own install — the tarballs, copied from the user's npm
 * cache, and no package documents (./npm-cache.ts) — and `--prefer-offline`: offline where the user's
 * cache holds the tarballs, downloading only the tarballs a cleaned cache lacks.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain-JavaScript script, without declarations
import { consumerProject } from '../../../scripts/consumer-lock.mjs';
import { OPTIONAL_PEERS } from '../../../src/util/optional-peers.js';
import { assertBuilt, declarationsBuilt, packedByChecks, ROOT, runNode, type Spawned } from '../../support/run-cli.js';
import { cachedKeys, npmEnv, tarballOnlyCache } from './npm-cache.js';

const PEERS = Object.values(OPTIONAL_PEERS).flat();
const MAX_PACKAGES = 25;

let dir: string;
let project: string;
let packages: string[];
let cache: string;

beforeAll(async () => {
  assertBuilt();
  await declarationsBuilt();
  if (!existsSync(join(ROOT, 'dist/index.d.ts'))) throw new Error('dist/index.d.ts is missing: run `npm run build`');
  dir = mkdtempSync(join(tmpdir(), 'brood-tarball-'));
  // `npm test` packs once for this test and its package check; run alone, the test packs for itself.
  const tarball = (await packedByChecks()) ?? packHere(dir);
  project = join(dir, 'host');
  mkdirSync(project);
  const { packageJson, packageLock } = consumerProject(ROOT, { name: 'host', project, tarball });
  writeFileSync(join(project, 'package.json'), JSON.stringify(packageJson));
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(packageLock));
  cache = join(dir, 'npm-cache');
  tarballOnlyCache(cache, packageLock.packages);
  npm(project, ['ci', '--prefer-offline', '--no-audit', '--no-fund'], cache);
  packages = installedPackages(project);
}, 300_000); // in `npm test`, after the tsc pass that writes the declarations, which runs beside the tests

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the packed package, installed into an empty project', () => {
  it('installs from tarballs alone, as on a machine whose npm cache holds only what `npm install` fetched', () => {
    const documents = cachedKeys(cache).filter((key) => key.startsWith('make-fetch-happen:') && !key.endsWith('.tgz'));
    expect(documents).toEqual([]);
  });

  it(`installs at most ${MAX_PACKAGES} packages, QuickJS among them and none of the optional peers; brood has its LICENSE`, () => {
    expect(packages).toContain('brood');
    expect(packages).toContain('quickjs-emscripten');
    for (const peer of PEERS) expect(packages).not.toContain(peer.name);
    expect(packages.length).toBeLessThanOrEqual(MAX_PACKAGES);
    expect(existsSync(join(project, 'node_modules/brood/LICENSE'))).toBe(true);
  });

  it('compiles a strict TypeScript host against the published declarations, without skipLibCheck', () => {
    copyFileSync(join(ROOT, 'test/processes/packaging/consumer/main.ts'), join(project, 'main.ts'));
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(consumerTsconfig()));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    // A larger young generation, as scripts/declarations.mjs gives its tsc: tsc allocates fast and keeps
    // little, so fewer, larger scavenges save it work (~11.5 → ~10.6 s of CPU here).
    const compiled = spawnSyncNode(['--max-semi-space-size=64', tsc, '-p', project], project);
    expect(compiled.stdout + compiled.stderr).toBe('');
    expect(compiled.code).toBe(0);
    expect(existsSync(join(project, 'main.js'))).toBe(true);
  }, 180_000); // checks all of @types/node and zod too: ~30 s on an idle 2-core machine

  it('runs a delegation, and each optional feature without its package fails at configuration, naming it', async () => {
    const run = await runNode([join(project, 'main.js')], { cwd: project, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      output: string;
      stopReason: string;
      children: number;
      missing: Record<string, { code: string; message: string }>;
    };
    expect(report.output).toBe('Lead: Lyon: 522000');
    expect(report.stopReason).toBe('completed');
    expect(report.children).toBe(1);
    expect(report.missing.mcpTools?.code).toBe('MISSING_DEPENDENCY');
    expect(report.missing.mcpTools?.message).toContain('npm install @modelcontextprotocol/sdk@^1.32.2');
    expect(report.missing.mcpServer?.code).toBe('MISSING_DEPENDENCY');
    expect(report.missing.mcpServer?.message).toContain('npm install @modelcontextprotocol/sdk@^1.32.2');
    expect(report.missing.acpProvider?.code).toBe('MISSING_DEPENDENCY');
    expect(report.missing.acpProvider?.message).toContain('npm install @agentclientprotocol/sdk@^2.4.0');
    expect(report.missing.queueRunner?.code).toBe('MISSING_DEPENDENCY');
    expect(report.missing.queueRunner?.message).toContain('npm install bullmq@^6.7.0 ioredis@^5.11.1');
    // telemetry is an option of createBrood: a missing package there is a configuration error.
    expect(report.missing.telemetry?.code).toBe('INVALID_CONFIG');
    expect(report.missing.telemetry?.message).toContain('npm install @opentelemetry/api@~1.9.0');
  }, 60_000);

  it('`brood run` with mcpServers, `brood host`, `brood acp` and `brood mcp` name the missing packages and exit 1', async () => {
    const bin = join(project, 'node_modules/brood/dist/cli/main.js');
    writeFileSync(join(project, 'mcp.json'), JSON.stringify(mcpRunConfig()));
    const run = await runNode([bin, 'run', '--config', 'mcp.json'], { cwd: project });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('[MISSING_DEPENDENCY]');
    expect(run.stderr).toContain('npm install @modelcontextprotocol/sdk@^1.32.2');
    const host = await runNode([bin, 'host', '--redis', 'redis://127.0.0.1:6379'], { cwd: project });
    expect(host.code).toBe(1);
    expect(host.stderr).toContain('[MISSING_DEPENDENCY]');
    expect(host.stderr).toContain('npm install bullmq@^6.7.0 ioredis@^5.11.1');
    const acp = await runNode([bin, 'acp', '--config', 'brood.json'], { cwd: project });
    expect(acp.code).toBe(1);
    expect(acp.stderr).toContain('[MISSING_DEPENDENCY]');
    expect(acp.stderr).toContain('npm install @agentclientprotocol/sdk@^2.4.0');
    const mcp = await runNode([bin, 'mcp', '--config', 'brood.json'], { cwd: project });
    expect(mcp.code).toBe(1);
    expect(mcp.stderr).toContain('[MISSING_DEPENDENCY]');
    expect(mcp.stderr).toContain('npm install @modelcontextprotocol/sdk@^1.32.2');
  });
});

describe('package.json', () => {
  it('declares exactly the optional peers brood probes for, with the ranges its messages install', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    const ranges = Object.fromEntries(PEERS.map((peer) => [peer.name, peer.range]));
    expect(pkg.peerDependencies).toEqual(ranges);
    expect(pkg.peerDependenciesMeta).toEqual(Object.fromEntries(PEERS.map((peer) => [peer.name, { optional: true }])));
    // The repository's own install still has every peer, for its tests.
    for (const peer of PEERS) expect(Object.keys(pkg.devDependencies ?? {})).toContain(peer.name);
    for (const peer of PEERS) expect(Object.keys(pkg.dependencies ?? {})).not.toContain(peer.name);
  });
});

function packHere(destination: string): string {
  const [packed] = JSON.parse(npm(ROOT, ['pack', '--ignore-scripts', '--json', '--pack-destination', destination])) as {
    filename: string;
  }[];
  return join(destination, packed!.filename);
}

function npm(cwd: string, args: string[], cache?: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: npmEnv(cache) });
}

/** Every package npm placed in the project (its hidden lockfile lists each installed directory). */
function installedPackages(root: string): string[] {
  const lock = JSON.parse(readFileSync(join(root, 'node_modules/.package-lock.json'), 'utf8')) as {
    packages: Record<string, unknown>;
  };
  return Object.keys(lock.packages).map((path) =>
    path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
  );
}

/** A `brood run` config whose only optional part is an MCP server (nothing is reached before it is set up). */
function mcpRunConfig(): Record<string, unknown> {
  return {
    models: [{ id: 'local', baseURL: 'http://127.0.0.1:9/v1', models: ['m'] }],
    agent: { model: { provider: 'local', model: 'm' } },
    mcpServers: { files: { command: process.execPath, args: ['server.js'] } },
    prompt: 'List the files.',
  };
}

function consumerTsconfig(): Record<string, unknown> {
  return {
    compilerOptions: {
      strict: true,
      skipLibCheck: false,
      target: 'ES2022',
      lib: ['ES2022'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      // @types/node from this repository: a host brings its own, brood does not install it.
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules/@types')],
    },
    files: ['main.ts'],
  };
}

function spawnSyncNode(args: string[], cwd: string): Spawned {
  try {
    const stdout = execFileSync(process.execPath, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    const failed = error as { status: number | null; stdout: string; stderr: string };
    return { code: failed.status, stdout: failed.stdout, stderr: failed.stderr };
  }
}
