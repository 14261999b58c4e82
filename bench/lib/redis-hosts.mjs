// A private redis-server (free loopback port, temp dir, no persistence) and `brood host` processes
// from the built CLI, for the queue runner rows. Everything started here is stopped by close().
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function waitFor(child, stream, pattern, what) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        child[stream].off('data', onData);
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code) => reject(new Error(`${what} exited (${code}): ${seen.slice(-300)}`));
    child[stream].on('data', onData);
    child.once('exit', onExit);
  });
}

/**
 * Redis plus `hosts` hosts of `threads` threads each; resolves once every host printed its ready line.
 * `nodeArgs`: extra node flags for the hosts (profiling: `--cpu-prof`); `hostStdout`: where the hosts'
 * stdout goes (profiling: 'inherit' shows what V8's --trace-* flags print).
 */
export async function startRedisAndHosts({ hosts, threads, queue, nodeArgs = [], hostStdout = 'ignore' }) {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const dir = mkdtempSync(join(tmpdir(), 'brood-bench-redis-'));
  const port = await freePort();
  const redis = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await waitFor(redis, 'stdout', /Ready to accept connections/, 'redis-server');
  const url = `redis://127.0.0.1:${port}`;
  const children = Array.from({ length: hosts }, () =>
    spawn(
      process.execPath,
      [
        ...nodeArgs,
        CLI,
        'host',
        '--redis',
        url,
        '--queue',
        queue,
        '--threads',
        String(threads),
        '--concurrency',
        '256',
      ],
      {
        stdio: ['ignore', hostStdout, 'pipe'],
      },
    ),
  );
  const stop = async () => {
    const exits = [...children, redis].map((child) =>
      child.exitCode === null && child.signalCode === null
        ? new Promise((resolve) => child.once('exit', resolve))
        : null,
    );
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(exits.slice(0, children.length));
    redis.kill('SIGTERM');
    await exits.at(-1);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(children.map((child) => waitFor(child, 'stderr', /^brood host ready /m, 'brood host')));
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, pids: children.map((child) => child.pid), redisPid: redis.pid, close: stop };
}
