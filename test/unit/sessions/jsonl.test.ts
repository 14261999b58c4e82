/** fileSessions specifics: on-disk format, repair of torn tails, corruption reports, handle cap. */
import { existsSync } from 'node:fs';
import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileSessionStore } from '../../../src/sessions/jsonl.js';
import { fileSessions } from '../../../src/sessions/jsonl.js';
import { expectCode } from '../../support/codes.js';
import { events, header, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const opened: FileSessionStore[] = [];

/** Every store a test opens is closed afterwards, so no descriptor outlives its temp dir. */
function store(options?: Parameters<typeof fileSessions>[1], at = dir): FileSessionStore {
  const s = fileSessions(at, options);
  opened.push(s);
  return s;
}

function warnings(): { messages: string[]; onWarning: (message: string) => void } {
  const messages: string[] = [];
  return { messages, onWarning: (message) => messages.push(message) };
}

/** A session written and closed by one store instance, for a later instance to load. */
async function written(id: string, count: number): Promise<string> {
  const s = store();
  await s.create(header(id));
  if (count > 0) await s.append(id, events(0, count));
  await s.close();
  return join(dir, `${id}.jsonl`);
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await cleanup();
});

describe('fileSessions format and persistence', () => {
  it('writes the header line then one event per line', async () => {
    const file = await written('fmt', 2);
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(JSON.parse(lines[0]!)).toEqual(header('fmt'));
    expect(lines.slice(1, 3).map((line) => JSON.parse(line))).toEqual(events(0, 2));
  });

  it('reads identical data through a new store instance on the same dir', async () => {
    const s = store();
    await s.create(header('a', { createdAt: 2 }));
    await s.create(header('b', { createdAt: 1, parentSession: 'a', origin: 'subagent', delegationDepth: 1 }));
    const evs = events(0, 3).map((e) => ({ ...e, data: { ...e.data, unicode: 'héllo ✓ \u2028 "q"\n' } }));
    await s.append('a', evs);
    await s.flush('a');
    await s.close();
    const fresh = store();
    expect(await fresh.read('a')).toEqual({ header: header('a', { createdAt: 2 }), events: evs });
    expect((await fresh.list()).map((h) => h.id)).toEqual(['b', 'a']);
    await fresh.append('a', events(3, 1));
    expect((await fresh.read('a')).events.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
  });

  it('creates nested directories, and list() on a missing dir is [] without creating it', async () => {
    const nested = join(dir, 'a', 'b', 'c');
    const s = store({}, nested);
    expect(await s.list()).toEqual([]);
    expect(existsSync(nested)).toBe(false);
    await s.create(header('n'));
    expect((await stat(join(nested, 'n.jsonl'))).isFile()).toBe(true);
    expect(s.dir).toBe(nested);
  });

  it.each(['../evil', '.', '..', 'a/b', 'a\\b', '', 'x'.repeat(129), 'sp ace'])(
    'rejects unsafe id %j with INVALID_CONFIG',
    async (id) => {
      const s = store();
      await expectCode(s.create(header(id)), 'INVALID_CONFIG');
      await expectCode(s.read(id), 'INVALID_CONFIG');
      await expectCode(s.append(id, events(0, 1)), 'INVALID_CONFIG');
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it('ignores files that are not sessions', async () => {
    await written('real', 1);
    await writeFile(join(dir, 'notes.txt'), 'hello');
    await writeFile(join(dir, 'bad name.jsonl'), 'x');
    expect((await store().list()).map((h) => h.id)).toEqual(['real']);
  });

  it('round-trips 10,000 events', async () => {
    const s = store();
    await s.create(header('big'));
    const all = events(0, 10_000);
    for (let i = 0; i < all.length; i += 500) await s.append('big', all.slice(i, i + 500));
    await s.close();
    expect((await store().read('big')).events).toEqual(all);
  });

  it('its methods work detached from the store, and on a copy of it', async () => {
    const s = store();
    const { create, append, read, list } = s;
    await create(header('loose'));
    await append('loose', events(0, 2));
    expect((await read('loose')).events).toEqual(events(0, 2));
    const copy = { ...s };
    expect((await copy.list()).map((h) => h.id)).toEqual(['loose']);
    expect(copy.dir).toBe(s.dir);
    expect(await list()).toHaveLength(1);
  });

  it('rejects every operation after close() with DISPOSED', async () => {
    const s = store();
    await s.create(header('c'));
    const pending = s.append('c', events(0, 1));
    await s.close();
    await pending;
    await expectCode(s.read('c'), 'DISPOSED');
    await expectCode(s.list(), 'DISPOSED');
    expect((await store().read('c')).events).toHaveLength(1);
  });
});

describe('fileSessions concurrency and handles', () => {
  it('keeps concurrent appends in call order', async () => {
    const s = store({ maxOpenFiles: 1 });
    await s.create(header('x'));
    await s.create(header('y'));
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 100; i++) {
      calls.push(s.append('x', events(i, 1)), s.append('y', events(i, 1)));
    }
    await Promise.all(calls);
    await s.close();
    const fresh = store();
    expect((await fresh.read('x')).events).toEqual(events(0, 100));
    expect((await fresh.read('y')).events).toEqual(events(0, 100));
  });

  it('serves more sessions than the handle cap (200 sessions, cap 64) without exceeding it', async () => {
    const fdCount = async (): Promise<number | undefined> =>
      existsSync('/proc/self/fd') ? (await readdir('/proc/self/fd')).length : undefined;
    const before = await fdCount();
    const s = store({ maxOpenFiles: 64 });
    const ids = Array.from({ length: 200 }, (_, i) => `s${i}`);
    await Promise.all(ids.map((id) => s.create(header(id))));
    for (let round = 0; round < 3; round++) {
      await Promise.all(ids.map((id) => s.append(id, events(round * 2, 2))));
    }
    await Promise.all(ids.slice(0, 50).map((id) => s.flush(id)));
    const during = await fdCount();
    if (before !== undefined && during !== undefined) expect(during - before).toBeLessThanOrEqual(64 + 8);
    for (const id of ids) expect((await s.read(id)).events).toEqual(events(0, 6));
    expect(await s.list()).toHaveLength(200);
  });
});

describe('fileSessions repair and corruption', () => {
  it('a reader drops a torn last line without touching the file; the writer repairs it on its first append', async () => {
    const file = await written('t', 3);
    const goodSize = (await stat(file)).size;
    await appendFile(file, '{"seq":3,"time":1,"ty');
    const tornSize = (await stat(file)).size;
    const { messages, onWarning } = warnings();
    const s = store({ onWarning });
    expect((await s.read('t')).events).toEqual(events(0, 3));
    expect((await stat(file)).size).toBe(tornSize); // "not yet written" to a reader; never truncated
    expect(messages).toHaveLength(0);
    await s.append('t', events(3, 2));
    expect(messages).toHaveLength(1);
    await s.close();
    expect((await stat(file)).size).toBeGreaterThan(goodSize);
    expect((await store().read('t')).events).toEqual(events(0, 5));
  });

  it('a complete last line that does not parse (zero-filled tail) is dropped by readers, repaired by the writer', async () => {
    const file = await written('z', 2);
    await appendFile(file, '\0\0\0\0\n');
    const damaged = await readFile(file);
    const { messages, onWarning } = warnings();
    const s = store({ onWarning });
    expect((await s.read('z')).events).toEqual(events(0, 2));
    expect(await readFile(file)).toEqual(damaged);
    await s.flush('z');
    expect(messages).toHaveLength(1);
    await s.close();
    expect((await readFile(file)).includes(0)).toBe(false);
  });

  it('repairs a torn tail before the first append of a new instance', async () => {
    const file = await written('ap', 2);
    await appendFile(file, '{"seq":2,"ti');
    const s = store();
    await s.append('ap', events(2, 1));
    await s.close();
    expect((await store().read('ap')).events).toEqual(events(0, 3));
  });

  it('reports garbage in the middle as SESSION_CORRUPT naming file and line', async () => {
    const file = await written('g', 4);
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[2] = 'not json at all';
    await writeFile(file, lines.join('\n'));
    const error = await expectCode(store().read('g'), 'SESSION_CORRUPT');
    expect(error.details).toEqual({ file, line: 3 });
    expect(error.message).toContain(file);
  });

  it.each([
    [
      'an event failing the schema',
      (lines: string[]) => {
        lines[2] = '{"seq":1,"time":1}';
      },
      3,
    ],
    [
      'a valid but schema-failing last line',
      (lines: string[]) => {
        lines[3] = '{"seq":2}';
      },
      4,
    ],
    ['a seq gap', (lines: string[]) => void lines.splice(2, 1), 3],
    ['seq not starting at 0', (lines: string[]) => void lines.splice(1, 1), 2],
    [
      'a header failing the schema',
      (lines: string[]) => {
        lines[0] = '{"id":"c","createdAt":"x","delegationDepth":0,"model":{}}';
      },
      1,
    ],
    [
      'a header naming another id',
      (lines: string[]) => {
        lines[0] = JSON.stringify(header('other'));
      },
      1,
    ],
    [
      'an unparseable header followed by events',
      (lines: string[]) => {
        lines[0] = '{"id":';
      },
      1,
    ],
  ])('reports %s as SESSION_CORRUPT with the line', async (_name, edit, line) => {
    const file = await written('c', 3);
    const lines = (await readFile(file, 'utf8')).split('\n');
    edit(lines);
    await writeFile(file, lines.join('\n'));
    const error = await expectCode(store().read('c'), 'SESSION_CORRUPT');
    expect(error.details).toEqual({ file, line });
  });

  it.each([
    ['torn header', '{"id":"h","createdAt":1,"dele'],
    ['complete-but-unterminated header', JSON.stringify(header('h'))],
    ['unparseable only line', '{"id":\n'],
    ['empty file', ''],
  ])('treats a %s as a session that never existed', async (_name, content) => {
    await written('ok', 0);
    const file = join(dir, 'h.jsonl');
    await writeFile(file, content);
    const { messages, onWarning } = warnings();
    const s = store({ onWarning });
    expect((await s.list()).map((h) => h.id)).toEqual(['ok']);
    expect(messages).toHaveLength(1);
    await expectCode(s.read('h'), 'NOT_RESUMABLE');
    await expectCode(s.append('h', events(0, 1)), 'NOT_RESUMABLE');
    await expectCode(s.flush('h'), 'NOT_RESUMABLE');
    // Its id is free again.
    await s.create(header('h'));
    await s.append('h', events(0, 1));
    expect((await s.read('h')).events).toEqual(events(0, 1));
  });

  it('rejects a stored delegationDepth of -1 with INVALID_DEPTH on read and list', async () => {
    const file = join(dir, 'd.jsonl');
    await writeFile(
      file,
      `${JSON.stringify({ ...header('d'), delegationDepth: -1 })}\n${JSON.stringify(events(0, 1)[0])}\n`,
    );
    const error = await expectCode(store().read('d'), 'INVALID_DEPTH');
    expect(error.details).toMatchObject({ file, line: 1 });
    await expectCode(store().list(), 'INVALID_DEPTH');
  });

  it('reports a corrupt header from list() as SESSION_CORRUPT', async () => {
    await writeFile(join(dir, 'bad.jsonl'), '{"id":"bad","delegationDepth":0}\n');
    const error = await expectCode(store().list(), 'SESSION_CORRUPT');
    expect(error.details).toEqual({ file: join(dir, 'bad.jsonl'), line: 1 });
  });
});
