/**
 * Real Redis and real `brood host` processes for the queue runner tests. Each suite starts its own
 * redis-server on a free loopback port (temp dir, no persistence) and stops it. Without the binary
 * the suites fail when CI is set and skip, saying so, otherwise.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../support/until.js';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'];
export const REDIS_SERVER = CANDIDATES.find((path) => existsSync(path));
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** `describe` or `describe.skip`, with the reason printed once; a missing binary fails under CI. */
export function redisAvailable(): boolean {
  if (REDIS_SERVER) return true;
  if (process.env.CI) throw new Error('redis-server is not installed (required when CI is set; .ci/run installs it)');
  console.warn('SKIPPED: queue runner tests need redis-server (apt-get install redis-server)');
  return false;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export class RedisServer {
  private process: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'brood-redis-'));

  private constructor(readonly port: number) {}

  static async start(port?: number): Promise<RedisServer> {
    const server = new RedisServer(port ?? (await freePort()));
    await server.boot();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again, after stop) on the same port: a restarted Redis has lost everything. */
  async boot(): Promise<void> {
    const child = spawn(
      REDIS_SERVER!,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.process = child;
    await waitForLine(child, 'stdout', /Ready to accept connections/, 'redis-server');
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Waits until at least `count` jobs wait in BullMQ's queue `queue` (prefix `brood`). */
export async function waitForQueuedJobs(url: string, queue: string, count = 1): Promise<void> {
  const { Redis } = await import('ioredis');
  const probe = new Redis(url);
  try {
    await until(async () => (await probe.llen(`brood:${queue}:wait`)) >= count);
  } finally {
    probe.disconnect();
  }
}

export interface HostProcess {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `node dist/cli/main.js host ...`; resolves once its ready line is on stderr. */
export async function startHost(url: string, args: string[] = [], env?: NodeJS.ProcessEnv): Promise<HostProcess> {
  const host = spawnHost(url, args, env);
  await waitForLine(host.child, 'stderr', /^brood host ready /m, 'brood host');
  return host;
}

export function spawnHost(url: string, args: string[] = [], env?: NodeJS.ProcessEnv): HostProcess {
  const child = spawn(process.execPath, [CLI, 'host', '--redis', url, '--threads', '1', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

export async function stopHost(host: HostProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill(signal);
  await host.exited;
}

function waitForLine(child: ChildProcess, stream: 'stdout' | 'stderr', pattern: RegExp, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        child[stream]?.off('data', onData);
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null): void =>
      reject(new Error(`${what} exited (${code}) before it was ready: ${seen}`));
    child[stream]?.on('data', onData);
    child.once('exit', onExit);
  });
}
