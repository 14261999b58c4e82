/** Spawns the built `brood` bin (dist/cli/main.js); `npm test` builds before vitest runs. */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { until } from './until.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
}

/**
 * Resolves once dist's declarations are written. `npm test` (scripts/checks.mjs) starts the tests as
 * soon as the JavaScript is built, while the tsc pass still writes the declarations; it names a file
 * in BROOD_DECLARATIONS_STAMP that it writes (`ok` or `failed`) when that pass ends. Outside `npm test`
 * the build has ended before the tests start.
 */
export async function declarationsBuilt(): Promise<void> {
  const built = await stampWritten('BROOD_DECLARATIONS_STAMP');
  if (built !== undefined && built !== 'ok') throw new Error('the declarations build failed: see its output');
}

/**
 * The package `npm test` packed, or undefined outside `npm test` (the caller then packs for itself).
 * scripts/checks.mjs packs dist once, after both build steps, for its package check and for the test
 * that installs the tarball; it names a file in BROOD_PACKAGE_STAMP into which it writes the tarball's
 * path (or `failed`) once packed.
 */
export async function packedByChecks(): Promise<string | undefined> {
  const tarball = await stampWritten('BROOD_PACKAGE_STAMP');
  if (tarball === 'failed') throw new Error('npm pack (or the build before it) failed: see check:package');
  return tarball;
}

/** What scripts/checks.mjs wrote into the stamp file the environment variable names, once written; undefined outside `npm test`. */
async function stampWritten(variable: string): Promise<string | undefined> {
  const stamp = process.env[variable];
  if (stamp === undefined) return undefined;
  await until(() => existsSync(stamp));
  return readFileSync(stamp, 'utf8');
}

export interface Spawned {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Async on purpose: a loopback server in this process must keep answering while the child runs. */
export function runNode(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {},
): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    // An `undefined` override removes the variable (spawn would pass the string "undefined").
    const env = Object.fromEntries(
      Object.entries({ ...process.env, ...options.env }).filter(([, v]) => v !== undefined),
    );
    const child = spawn(process.execPath, args, {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 25_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export const runCli = (args: string[], options?: Parameters<typeof runNode>[1]): Promise<Spawned> =>
  runNode([CLI, ...args], options);
