/**
 * Session files on disk: readers never write, one writer per session (a
 * crash-safe lock file; SESSION_LOCKED for a second writer), appends the loader would refuse are
 * refused at append time, and a directory where a session file should be is a clear error.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Brood, SessionStore } from '../../../src/index.js';
import { createBrood, fileSessions, memorySessions } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { until } from '../../support/until.js';

const header = (id: string) => ({ id, createdAt: 1, delegationDepth: 0, model: route });
const INDEX = fileURLToPath(new URL('../../../dist/index.js', import.meta.url));
const HOLDER = fileURLToPath(new URL('./fixtures/hold-session.mjs', import.meta.url));

let dir: string;
const open: Brood[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'brood-sessions-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((brood) => brood.close()));
  rmSync(dir, { recursive: true, force: true });
});

function runtime(store: SessionStore = fileSessions(dir)): Brood {
  const brood = createBrood({ sessions: store, runner: 'inline' });
  open.push(brood);
  return brood;
}

describe('appends the loader would refuse are refused at append time', () => {
  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'time %s → INVALID_CONFIG, nothing written, the session still loads',
    async (time) => {
      for (const store of [fileSessions(dir), memorySessions()]) {
        await store.create(header('t'));
        await store.append('t', [{ seq: 0, time: 1, type: 'x', data: {} }]);
        await expectCode(store.append('t', [{ seq: 1, time, type: 'x', data: {} }]), 'INVALID_CONFIG');
        await store.append('t', [{ seq: 1, time: 2, type: 'x', data: {} }]);
        expect((await store.read('t')).events.map((event) => event.time)).toEqual([1, 2]);
        await (store as { close?: () => Promise<void> }).close?.();
      }
      expect((await fileSessions(dir).read('t')).events).toHaveLength(2);
    },
  );
});

describe('readers never write', () => {
  it('a reader polling while a 16 MB event is being written never cuts it off: the session stays loadable', async () => {
    const writer = fileSessions(dir);
    await writer.create(header('big'));
    await writer.append('big', [{ seq: 0, time: 1, type: 'x', data: {} }]);
    const reader = fileSessions(dir);
    let writing = true;
    const reads = (async () => {
      let count = 0;
      while (writing) {
        await reader.read('big');
        count += 1;
      }
      return count;
    })();
    await writer.append('big', [{ seq: 1, time: 2, type: 'big', data: { blob: 'x'.repeat(16 * 1024 * 1024) } }]);
    writing = false;
    expect(await reads).toBeGreaterThan(0);
    await writer.append('big', [{ seq: 2, time: 3, type: 'x', data: {} }]);
    await writer.close();
    expect((await fileSessions(dir).read('big')).events.map((event) => event.seq)).toEqual([0, 1, 2]);
  });

  it('read() and list() leave every byte and every file as they were (torn tail, never-created header)', async () => {
    const store = fileSessions(dir);
    await store.create(header('torn'));
    await store.append('torn', [{ seq: 0, time: 1, type: 'x', data: {} }]);
    await store.close();
    writeFileSync(join(dir, 'torn.jsonl'), '{"seq":1,"time":2,"ty', { flag: 'a' });
    writeFileSync(join(dir, 'half.jsonl'), '{"id":"half","crea');
    const before = await snapshot();
    const reader = fileSessions(dir);
    expect((await reader.read('torn')).events).toHaveLength(1);
    await expectCode(reader.read('half'), 'NOT_RESUMABLE');
    expect((await reader.list()).map((h) => h.id)).toEqual(['torn']);
    await reader.close();
    expect(await snapshot()).toEqual(before);
  });
});

async function snapshot(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) out[name] = await readFile(join(dir, name), 'utf8');
  return out;
}

describe('one writer per session', () => {
  it('two runtimes resuming one session: the second rejects with SESSION_LOCKED naming the file and the holder', async () => {
    const first = runtime();
    const agent = await first.createAgent({ id: 'shared', model: route });
    await agent.run('one');
    const second = runtime();
    const error = await expectCode(second.resumeAgent('shared'), 'SESSION_LOCKED');
    expect(error.message).toContain(join(dir, 'shared.jsonl'));
    expect(error.message).toContain(`process ${process.pid}`);
    // Disposing the owner releases the lock: now the second runtime may write it.
    await agent.dispose();
    const resumed = await second.resumeAgent('shared');
    expect(await resumed.run('two')).toMatchObject({ stopReason: 'completed' });
    await second.close();
    expect((await fileSessions(dir).read('shared')).events.filter((event) => event.type === 'turn/end')).toHaveLength(
      2,
    );
  });

  it('two resumes of one closed session by two runtimes: exactly one wins; the session stays loadable', async () => {
    const creator = runtime();
    await (await creator.createAgent({ id: 's', model: route })).run('first');
    await creator.close();
    const [a, b] = [runtime(), runtime()];
    const results = await Promise.allSettled([a.resumeAgent('s'), b.resumeAgent('s')]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const loser = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect((loser.reason as { code?: string }).code).toBe('SESSION_LOCKED');
    const winner = (
      results.find((result) => result.status === 'fulfilled') as PromiseFulfilledResult<
        Awaited<ReturnType<Brood['resumeAgent']>>
      >
    ).value;
    await winner.run('second');
    await Promise.all([a.close(), b.close()]);
    expect((await fileSessions(dir).read('s')).events.filter((event) => event.type === 'turn/end')).toHaveLength(2);
  });

  it('one runtime resuming twice at once shares one restore (no self-lockout)', async () => {
    const creator = runtime();
    await creator.createAgent({ id: 'twice', model: route });
    await creator.close();
    const brood = runtime();
    const [x, y] = await Promise.all([brood.resumeAgent('twice'), brood.resumeAgent('twice')]);
    expect(x).toBe(y);
  });

  it('a session held by another process is SESSION_LOCKED naming its pid; once that process is killed, its stale lock is broken', async () => {
    const child = spawn(process.execPath, [HOLDER, INDEX, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
        child.on('exit', (code) => reject(new Error(`holder exited early (${code})`)));
      });
      const error = await expectCode(runtime().resumeAgent('held'), 'SESSION_LOCKED');
      expect(error.details).toMatchObject({ pid: child.pid, file: join(dir, 'held.jsonl') });
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    const resumed = await runtime().resumeAgent('held');
    expect(await resumed.run('after the crash')).toMatchObject({ stopReason: 'completed' });
  });

  it('stale locks (dead pid, reused pid) are broken; an unreadable lock is SESSION_LOCKED', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
    const store = fileSessions(dir);
    await store.create(header('a'));
    await store.close();
    const lock = join(dir, 'a.jsonl.lock');
    const host = (await import('node:os')).hostname();
    writeFileSync(lock, JSON.stringify({ pid: dead, started: 1, host, token: 'dead', at: 1 }));
    await (await runtime().resumeAgent('a')).dispose();
    // A live pid (our parent) whose process started long after the recorded start time: the pid was reused.
    writeFileSync(lock, JSON.stringify({ pid: process.ppid, started: 1, host, token: 'reused', at: 1 }));
    await (await runtime().resumeAgent('a')).dispose();
    writeFileSync(lock, 'not a lock');
    await expectCode(runtime().resumeAgent('a'), 'SESSION_LOCKED');
  });

  it('eight stores breaking the same stale lock at once: exactly one becomes the writer', async () => {
    const setup = fileSessions(dir);
    await setup.create(header('race'));
    await setup.close();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
    writeFileSync(
      join(dir, 'race.jsonl.lock'),
      JSON.stringify({ pid: dead, started: 1, host: (await import('node:os')).hostname(), token: 'stale', at: 1 }),
    );
    const stores = Array.from({ length: 8 }, () => fileSessions(dir));
    const results = await Promise.allSettled(stores.map((store) => store.acquire('race')));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results)
      if (result.status === 'rejected') expect((result.reason as { code?: string }).code).toBe('SESSION_LOCKED');
    await Promise.all(stores.map((store) => store.close()));
    expect(readdirSync(dir)).toEqual(['race.jsonl']); // released on close; no temp or break files left
  });

  it('a direct second writer of a store-created session is refused; memorySessions keeps its single-process semantics', async () => {
    const a = fileSessions(dir);
    await a.create(header('d'));
    const b = fileSessions(dir);
    await expectCode(b.append('d', [{ seq: 0, time: 1, type: 'x', data: {} }]), 'SESSION_LOCKED');
    await a.close();
    await b.append('d', [{ seq: 0, time: 1, type: 'x', data: {} }]);
    await b.close();
    const memory = memorySessions();
    const one = runtime(memory);
    await one.createAgent({ id: 'm', model: route });
    // Its acquire() only tells it which trees are live: a second runtime on the same store is not refused.
    const resumed = await runtime(memory).resumeAgent('m');
    expect(resumed.id).toBe('m');
  });
});

describe('a directory where a session file should be', () => {
  it('read and resume are SESSION_CORRUPT naming the path (not a raw EISDIR); list skips it', async () => {
    mkdirSync(join(dir, 'x.jsonl'));
    const store = fileSessions(dir);
    const read = await expectCode(store.read('x'), 'SESSION_CORRUPT');
    expect(read.message).toContain(join(dir, 'x.jsonl'));
    expect(await store.list()).toEqual([]);
    await expectCode(runtime().resumeAgent('x'), 'SESSION_CORRUPT');
    expect((await stat(join(dir, 'x.jsonl'))).isDirectory()).toBe(true);
  });
});

describe('taking many locks at once', () => {
  it('a burst of locks is one record file linked to each lock name, and no record file is left behind', async () => {
    const store = fileSessions(dir);
    const ids = Array.from({ length: 8 }, (_, i) => `burst${i}`);
    await Promise.all(ids.map((id) => store.create(header(id))));
    const inodes = new Set(await Promise.all(ids.map(async (id) => (await stat(join(dir, `${id}.jsonl.lock`))).ino)));
    expect(inodes.size).toBe(1);
    // Removed once no lock is being taken with it, not only at close (a process may exit without closing).
    await until(() => readdirSync(dir).every((name) => name.endsWith('.jsonl') || name.endsWith('.jsonl.lock')));
    await store.close();
    expect(readdirSync(dir).sort()).toEqual(ids.map((id) => `${id}.jsonl`).sort());
  });
});

describe('releasing', () => {
  it('a store closing leaves a lock that is no longer its own (replaced by another holder) in place', async () => {
    const store = fileSessions(dir);
    await store.create(header('r'));
    const lock = join(dir, 'r.jsonl.lock');
    const other = JSON.stringify({ pid: process.ppid, started: 1, host: 'elsewhere', token: 'theirs', at: 1 });
    rmSync(lock);
    writeFileSync(lock, other);
    await store.close();
    expect(readFileSync(lock, 'utf8')).toBe(other);
  });
});

describe('a holder that died while taking locks', () => {
  it('its record file is removed by whoever breaks one of its locks', async () => {
    const store = fileSessions(dir);
    await store.create(header('d'));
    await store.close();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
    const token = 'ab'.repeat(12);
    const record = JSON.stringify({ pid: dead, started: 1, host: (await import('node:os')).hostname(), token, at: 1 });
    writeFileSync(join(dir, `.lock-record.${token}.tmp`), record);
    writeFileSync(join(dir, 'd.jsonl.lock'), record);
    await (await runtime().resumeAgent('d')).dispose();
    expect(readdirSync(dir)).toEqual(['d.jsonl']);
  });
});
