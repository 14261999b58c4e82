/**
 * fileSessions reads an unchanged session once: reading it again (recovery reads each session several
 * times) costs a stat. Never at the price of a stale read: a change shows on the next read, including
 * one the file system's clock could not tell apart (the racily-clean rule).
 */
import type { BigIntStats } from 'node:fs';
import { appendFileSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FileSessionStore } from '../../../src/sessions/jsonl.js';
import { fileSessions } from '../../../src/sessions/jsonl.js';
import { SessionFileCache } from '../../../src/sessions/jsonl-cache.js';
import { events, header, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const opened: FileSessionStore[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await cleanup();
});

function store(): FileSessionStore {
  const s = fileSessions(dir);
  opened.push(s);
  return s;
}

/** Counts reads from any file handle (the prototype is shared by every handle node:fs/promises opens). */
async function countReads(): Promise<{ count: number }> {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  await unlink(join(dir, 'probe'));
  const counter = { count: 0 };
  const original = proto.read;
  vi.spyOn(proto, 'read').mockImplementation(function (this: FileHandle, ...args: unknown[]) {
    counter.count += 1;
    return (original as (...a: unknown[]) => ReturnType<FileHandle['read']>).apply(this, args);
  } as FileHandle['read']);
  return counter;
}

/** A session written by an earlier process, its file's last change a while ago (as after a crash). */
async function settledSession(id: string, count: number): Promise<void> {
  const writer = fileSessions(dir);
  await writer.create(header(id));
  await writer.append(id, events(0, count));
  await writer.close();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + 60_000);
}

describe('fileSessions reads an unchanged session once', () => {
  it('list, then three reads: the file is read from disk once (small sessions come in whole with the header)', async () => {
    await settledSession('a', 3);
    const reads = await countReads();
    const s = store();
    expect((await s.list()).map((h) => h.id)).toEqual(['a']);
    for (let i = 0; i < 3; i++) expect((await s.read('a')).events).toEqual(events(0, 3));
    expect(reads.count).toBe(1);
  });

  it('a read under the store own lock tells its writer where to append: no second read', async () => {
    await settledSession('a', 3);
    const reads = await countReads();
    const s = store();
    await s.acquire('a');
    expect((await s.read('a')).events).toHaveLength(3);
    const afterRead = reads.count;
    await s.append('a', events(3, 1));
    expect(reads.count).toBe(afterRead);
    expect((await fileSessions(dir).read('a')).events).toEqual(events(0, 4));
  });

  it('an append by another process shows on the next read', async () => {
    await settledSession('a', 2);
    const s = store();
    expect((await s.read('a')).events).toHaveLength(2);
    appendFileSync(join(dir, 'a.jsonl'), `${JSON.stringify(events(2, 1)[0])}\n`);
    expect((await s.read('a')).events).toEqual(events(0, 3));
  });

  it('a file replaced by another of the same size shows on the next read', async () => {
    await settledSession('a', 2);
    const s = store();
    await s.read('a');
    const file = join(dir, 'a.jsonl');
    const edited = (await import('node:fs')).readFileSync(file, 'utf8').replace('msg 1', 'msg 9');
    await unlink(file);
    writeFileSync(file, edited);
    expect((await s.read('a')).events[1]?.data).toMatchObject({ text: 'msg 9' });
  });

  it('what two reads return are separate objects (a caller may change its copy)', async () => {
    await settledSession('a', 1);
    const s = store();
    const first = await s.read('a');
    (first.events[0]?.data as { text: string }).text = 'changed by a caller';
    expect((await s.read('a')).events).toEqual(events(0, 1));
  });
});

describe('SessionFileCache', () => {
  const SECOND = 1_000_000_000n;
  /** Bytes in an allocation of their own size (a pooled Buffer keeps its whole 8 KiB slab alive). */
  const own = (text: string): Buffer => {
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
    bytes.write(text);
    return bytes;
  };

  async function fileWith(text: string): Promise<{ file: string; stats: BigIntStats }> {
    const file = join(dir, 'f.jsonl');
    writeFileSync(file, text);
    return { file, stats: await stat(file, { bigint: true }) };
  }

  it('remembers a file whose last change is well behind the clock, for as long as it is unchanged', async () => {
    const { file, stats } = await fileWith('{"id":"f"}\n');
    const cache = new SessionFileCache(1024, () => stats.ctimeNs + SECOND);
    cache.remember(file, { stat: stats, header: own('{"id":"f"}') });
    expect((await cache.lookup(file, 'header'))?.header.toString()).toBe('{"id":"f"}');
    appendFileSync(file, '{}\n');
    expect(await cache.lookup(file, 'header')).toBeUndefined();
  });

  it('does not remember a file changed within the file system clock margin (a same-size change could hide)', async () => {
    const { file, stats } = await fileWith('{"id":"f"}\n');
    const cache = new SessionFileCache(1024, () => stats.ctimeNs + 1_000_000n);
    cache.remember(file, { stat: stats, header: own('{"id":"f"}') });
    expect(await cache.lookup(file, 'header')).toBeUndefined();
  });

  it('a header-only entry does not answer for the whole file', async () => {
    const { file, stats } = await fileWith('{"id":"f"}\n');
    const cache = new SessionFileCache(1024, () => stats.ctimeNs + SECOND);
    cache.remember(file, { stat: stats, header: own('{"id":"f"}') });
    expect(await cache.lookup(file, 'whole')).toBeUndefined();
  });

  it('counts what an entry keeps alive: a view into a pooled slab costs the slab', async () => {
    const { file, stats } = await fileWith('{"id":"f"}\n');
    const cache = new SessionFileCache(4096, () => stats.ctimeNs + SECOND);
    cache.remember(file, { stat: stats, header: Buffer.from('{"id":"f"}') });
    expect(await cache.lookup(file, 'header')).toBeUndefined();
  });

  it('keeps within its byte budget, least recently used out first', async () => {
    const files: { file: string; stats: BigIntStats }[] = [];
    for (const name of ['a', 'b', 'c']) {
      const file = join(dir, `${name}.jsonl`);
      writeFileSync(file, '0123456789\n');
      files.push({ file, stats: await stat(file, { bigint: true }) });
    }
    // The newest change time of the three (bigints: Math.max does not take them).
    let latest = 0n;
    for (const { stats } of files) if (stats.ctimeNs > latest) latest = stats.ctimeNs;
    const cache = new SessionFileCache(25, () => latest + SECOND);
    const [a, b, c] = files as [(typeof files)[0], (typeof files)[0], (typeof files)[0]];
    cache.remember(a.file, { stat: a.stats, header: own('0123456789') });
    cache.remember(b.file, { stat: b.stats, header: own('0123456789') });
    expect(await cache.lookup(a.file, 'header')).toBeDefined(); // a is now the most recently used
    cache.remember(c.file, { stat: c.stats, header: own('0123456789') });
    expect(await cache.lookup(b.file, 'header')).toBeUndefined();
    expect(await cache.lookup(a.file, 'header')).toBeDefined();
    expect(await cache.lookup(c.file, 'header')).toBeDefined();
    cache.remember(a.file, { stat: a.stats, header: own('x'.repeat(26)) });
    expect(await cache.lookup(a.file, 'header')).toBeUndefined(); // larger than the whole budget
  });
});
