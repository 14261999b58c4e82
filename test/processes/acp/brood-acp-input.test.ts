/**
 * `brood acp` (the built bin, a real child process) fed what a broken or hostile client sends: a
 * 64 MB request line is refused with a JSON-RPC error and the process keeps serving; unparseable
 * lines are answered −32700 (id null); and whenever the process exits, stderr says why.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI } from '../../support/run-cli.js';

let dir: string;
let config: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'brood-acp-input-'));
  config = join(dir, 'agent.json');
  // No prompt is run here: the endpoint is never called.
  await writeFile(
    config,
    JSON.stringify({
      models: [{ id: 'loop', baseURL: 'http://127.0.0.1:9/v1', models: ['m'] }],
      agent: { model: { provider: 'loop', model: 'm' } },
    }),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

interface Served {
  send(line: string): void;
  /** The next JSON-RPC message brood writes on stdout. */
  next(): Promise<Record<string, unknown>>;
  stderr(): string;
  exited: Promise<number | null>;
}

function serve(): Served {
  const process_ = spawn(process.execPath, [CLI, 'acp', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] });
  child = process_;
  const queued: Record<string, unknown>[] = [];
  const waiting: ((message: Record<string, unknown>) => void)[] = [];
  let partial = '';
  process_.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines.filter((l) => l !== '')) {
      const message = JSON.parse(line) as Record<string, unknown>; // stdout is protocol only
      const waiter = waiting.shift();
      if (waiter) waiter(message);
      else queued.push(message);
    }
  });
  let stderr = '';
  process_.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  process_.stdin!.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => process_.once('close', (code) => resolve(code)));
  return {
    send: (line) => void process_.stdin!.write(`${line}\n`),
    next: () => {
      const message = queued.shift();
      return message ? Promise.resolve(message) : new Promise((resolve) => waiting.push(resolve));
    },
    stderr: () => stderr,
    exited,
  };
}

const initialize = (id: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: 1, ...extra } });

describe('brood acp input', () => {
  it('a 64 MB request line is refused with a JSON-RPC error for its id; the process keeps serving', async () => {
    const acp = serve();
    acp.send(initialize(1, { padding: 'x'.repeat(64 * 1024 * 1024) }));
    const refused = await acp.next();
    expect(refused).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32600 } });
    acp.send(initialize(2));
    expect(await acp.next()).toMatchObject({ jsonrpc: '2.0', id: 2, result: { protocolVersion: 1 } });
    expect(child?.exitCode).toBeNull();
    expect(acp.stderr()).toMatch(/refused a request line of \d+ bytes/);
  });

  it('unparseable lines are answered −32700 with id null, and serving goes on', async () => {
    const acp = serve();
    for (const garbage of ['this is not json', '{"jsonrpc": "2.0", "id": 3, "method": ', '\u0000\u0001']) {
      acp.send(garbage);
      expect(await acp.next()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    acp.send(initialize(4));
    expect(await acp.next()).toMatchObject({ id: 4, result: { protocolVersion: 1 } });
  });

  it('says on stderr why it exits: the client closing stdin, or a signal', async () => {
    const closing = serve();
    closing.send(initialize(1));
    await closing.next();
    child!.stdin!.end();
    expect(await closing.exited).toBe(0);
    expect(closing.stderr()).toMatch(/^brood acp: the client closed the connection \(end of stdin\); exiting$/m);

    const signalled = serve();
    signalled.send(initialize(1));
    await signalled.next();
    child!.kill('SIGTERM');
    expect(await signalled.exited).toBe(0);
    expect(signalled.stderr()).toMatch(/^brood acp: received SIGTERM; exiting$/m);
  });
});
