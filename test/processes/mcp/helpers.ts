/**
 * Helpers for the MCP suites: the official reference servers started from node_modules (no network),
 * real process checks (`ps`, signal 0) and an event-driven wait for a connection status.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Clock } from '../../../src/clock.js';
import type { McpServerStatus, McpStdioServer, SessionEvent } from '../../../src/index.js';

const require = createRequire(import.meta.url);
const packageDir = (name: string): string => dirname(require.resolve(`${name}/package.json`));

export const EVERYTHING_SCRIPT = join(packageDir('@modelcontextprotocol/server-everything'), 'dist', 'index.js');
export const FILESYSTEM_SCRIPT = join(packageDir('@modelcontextprotocol/server-filesystem'), 'dist', 'index.js');
export const FIXTURE_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'stdio-server.mjs');

export function everything(name = 'everything'): McpStdioServer {
  return { name, command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'] };
}

export function filesystem(root: string, name = 'fs'): McpStdioServer {
  return { name, command: process.execPath, args: [FILESYSTEM_SCRIPT, root] };
}

export function fixture(env: Record<string, string> = {}, name = 'fixture'): McpStdioServer {
  return { name, command: process.execPath, args: [FIXTURE_SCRIPT], env };
}

/** This test process's live child processes whose command line mentions `needle` (a real `ps`). */
export async function childProcesses(needle: string): Promise<number[]> {
  const { stdout } = await promisify(execFile)('ps', ['-A', '-o', 'pid=,ppid=,args=']);
  // Let Node close the `ps` child's own handle, so processHandles() counts only what brood left.
  await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
  const pids: number[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (match && Number(match[2]) === process.pid && match[3]!.includes(needle)) pids.push(Number(match[1]));
  }
  return pids;
}

/** Handles of child processes still open in this process (ProcessWrap): 0 once every child is gone. */
export function processHandles(): number {
  return process.getActiveResourcesInfo().filter((type) => type === 'ProcessWrap').length;
}

/** Records statuses and resolves waiters on the next status matching a predicate. */
export class StatusLog {
  readonly seen: McpServerStatus[] = [];
  private waiters: { test: (s: McpServerStatus) => boolean; resolve: (s: McpServerStatus) => void }[] = [];

  readonly onStatus = (status: McpServerStatus): void => {
    this.seen.push(status);
    for (const waiter of [...this.waiters]) {
      if (!waiter.test(status)) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(status);
    }
  };

  /** The next status (from now on) that matches. */
  next(test: (s: McpServerStatus) => boolean): Promise<McpServerStatus> {
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }
}

export function toolResults(events: SessionEvent[]): Record<string, unknown>[] {
  return events.filter((event) => event.type === 'tool/result').map((event) => event.data);
}

export function requestedTools(events: SessionEvent[]): string[][] {
  return events.filter((event) => event.type === 'model/request').map((event) => event.data.tools as string[]);
}

/** A loopback endpoint the fixture server's `hang` tool announces itself to (its pid). */
export async function announcements(): Promise<{ url: string; next(): Promise<number>; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const queued: number[] = [];
  const waiting: ((pid: number) => void)[] = [];
  const http = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      res.end('ok');
      const pid = Number(body);
      const waiter = waiting.shift();
      if (waiter) waiter(pid);
      else queued.push(pid);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/announce`,
    next: () => {
      const pid = queued.shift();
      return pid === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(pid);
    },
    close: () => {
      http.closeAllConnections();
      return new Promise((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * A clock (src/clock.ts) on which every wait lasts a fiftieth: the restart schedule
 * (0.5 s doubling, 15.5 s in all) takes ~0.3 s and a stdio server's 2 s exit grace 40 ms, against a
 * real server process. The statuses still report the policy's waits (retryInMs 500, 1 000, …).
 */
export const FAST_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms / 50);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
