/**
 * `fileSessions(dir)`: one JSONL file per session, `<dir>/<id>.jsonl` — header line, then one event
 * per line (SPEC §6). Durability: create and flush fsync; append only writes (the runtime flushes at
 * the points SPEC §6 requires, so per-append fsync would only cost latency).
 *
 * One writer per session: a store instance writes a session only while it holds the session's lock
 * file (lock.ts), taken by create(), acquire() or the first append, and dropped by release() or
 * close(). Readers (read, list) never take it and never modify a file: a torn last line is "not yet
 * written" to them; only the writer repairs it, when it opens the session for append.
 */
import { constants } from 'node:fs';
import { mkdir, open, readdir, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { describe } from '../describe.js';
import { BroodError } from '../errors.js';
import type { SessionHeader, SessionStore } from '../types.js';
import { parseConfig } from '../untrusted.js';
import { HandlePool } from './handles.js';
import { isNotFound, loadSessionFile, notAFile, readHeaderLine, unknownSession } from './jsonl-load.js';
import type { Warn } from './jsonl-load.js';
import { acquireSessionLock, type SessionLock } from './lock.js';
import { SessionSerial } from './serial.js';
import { checkEventShapes, checkHeader, checkSeqs } from './validate.js';

export interface FileSessionOptions {
  /** Told about repairs and skipped files (torn tails, never-created sessions). Default: ignore. */
  onWarning?: (message: string) => void;
  /** How many session files may stay open at once (LRU). Default 64. */
  maxOpenFiles?: number;
}

export type FileSessionStore = SessionStore & {
  /** Takes the session's single-writer lock for a runtime (SESSION_LOCKED if anyone else holds it). */
  acquire(id: string): Promise<void>;
  /** Drops the lock (after the operations already queued on the session). */
  release(id: string): Promise<void>;
  close(): Promise<void>;
  readonly dir: string;
};

/** This instance's write ownership of one session. */
interface Writer {
  lock: SessionLock;
  /** The seq the next event must carry; undefined until loaded (and repaired) under the lock. */
  nextSeq: number | undefined;
  /** A runtime has the session open (acquire()): a second acquire is refused even in this instance. */
  leased: boolean;
}

const ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
const SUFFIX = '.jsonl';
const LOCK_SUFFIX = '.lock';
// No O_CREAT when appending: appending to an unknown session must fail, not conjure an empty file.
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND;
const CREATE_FLAGS = APPEND_FLAGS | constants.O_CREAT | constants.O_EXCL;
const LIST_CONCURRENCY = 16;

export function isSafeSessionId(id: unknown): id is string {
  return typeof id === 'string' && ID_PATTERN.test(id) && id !== '.' && id !== '..';
}

const optionsSchema = z.strictObject({
  onWarning: z.custom<(message: string) => void>((value) => typeof value === 'function', 'a function').optional(),
  maxOpenFiles: z.number().int().positive().optional(),
});

export function fileSessions(dir: string, input: FileSessionOptions = {}): FileSessionStore {
  if (typeof dir !== 'string' || dir === '')
    throw new BroodError('INVALID_CONFIG', `fileSessions needs a directory path, got ${describe(dir)}`);
  const options = parseConfig(optionsSchema, input, 'fileSessions options');
  const root = resolve(dir);
  const warn: Warn = options.onWarning ?? (() => undefined);
  const pool = new HandlePool(options.maxOpenFiles ?? 64);
  const queue = new SessionSerial();
  // Sessions this instance writes (holds the lock of). A writer whose nextSeq is unknown loads the
  // file, repairing a torn tail, before its next append.
  const writers = new Map<string, Writer>();
  // Call order of this instance's creates: the exact tie-break list() needs when createdAt collides.
  const createOrder = new Map<string, number>();
  let dirReady: Promise<unknown> | undefined;
  let closing: Promise<void> | undefined;

  const fileOf = (id: string): string => join(root, id + SUFFIX);
  const lockOf = (id: string): string => join(root, id + SUFFIX + LOCK_SUFFIX);

  function ensureDir(): Promise<unknown> {
    dirReady ??= mkdir(root, { recursive: true }).catch((error: unknown) => {
      dirReady = undefined; // let a later call retry (e.g. permissions fixed)
      throw error;
    });
    return dirReady;
  }

  /** Validates the id and runs `task` on that session's queue. */
  function onSession<T>(id: string, op: string, task: () => Promise<T>): Promise<T> {
    if (closing !== undefined) return Promise.reject(new BroodError('DISPOSED', `${op}: session store is closed`));
    if (!isSafeSessionId(id)) {
      return Promise.reject(
        new BroodError('INVALID_CONFIG', `${op}: session id ${JSON.stringify(id)} is not a safe file name`, {
          details: { id },
        }),
      );
    }
    return queue.run(id, task);
  }

  /** Takes the lock unless this instance already writes the session. */
  async function writerOf(id: string): Promise<{ writer: Writer; fresh: boolean }> {
    const existing = writers.get(id);
    if (existing !== undefined) return { writer: existing, fresh: false };
    await ensureDir();
    const writer: Writer = {
      lock: await acquireSessionLock(lockOf(id), fileOf(id)),
      nextSeq: undefined,
      leased: false,
    };
    writers.set(id, writer);
    return { writer, fresh: true };
  }

  async function dropWriter(id: string): Promise<void> {
    const writer = writers.get(id);
    if (writer === undefined) return;
    writers.delete(id);
    await writer.lock.release();
  }

  /** The writer's next seq: loads the file once under the lock, repairing a torn tail on disk. */
  async function seqOf(id: string): Promise<number> {
    const { writer, fresh } = await writerOf(id);
    if (writer.nextSeq !== undefined) return writer.nextSeq;
    try {
      writer.nextSeq = (await loadSessionFile(fileOf(id), id, warn, { repair: true })).events.length;
    } catch (error) {
      if (fresh) await dropWriter(id); // e.g. an unknown session: hold no lock for it
      throw error;
    }
    return writer.nextSeq;
  }

  async function openForAppend(id: string): Promise<FileHandle> {
    try {
      return await open(fileOf(id), APPEND_FLAGS);
    } catch (error) {
      if (isNotFound(error)) {
        const writer = writers.get(id);
        if (writer !== undefined) writer.nextSeq = undefined;
        throw unknownSession(id, fileOf(id));
      }
      throw error;
    }
  }

  async function create(id: string, line: Buffer): Promise<void> {
    const { writer, fresh } = await writerOf(id);
    let handle: FileHandle;
    try {
      handle = await exclusiveCreate(id);
    } catch (error) {
      if (fresh) await dropWriter(id);
      throw error;
    }
    try {
      await writeAll(handle, line);
      await handle.sync();
    } catch (error) {
      // Leave no half-written session behind: a failed create is a session that never existed.
      await handle.close().catch(() => undefined);
      await unlink(fileOf(id)).catch(() => undefined);
      if (fresh) await dropWriter(id);
      throw error;
    }
    pool.adopt(id, handle);
    writer.nextSeq = 0;
    createOrder.set(id, createOrder.size);
    await syncDirectory(root);
  }

  async function exclusiveCreate(id: string): Promise<FileHandle> {
    const file = fileOf(id);
    try {
      return await open(file, CREATE_FLAGS, 0o644);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    }
    // A file whose header was torn by a crash is a session that never existed; its id is free again.
    const existing = await readHeaderLine(file, id).catch(() => undefined);
    if (existing?.kind === 'never-existed') {
      warn(`${file}: ${existing.reason}; replacing it with a new session ${id}`);
      await unlink(file);
      try {
        return await open(file, CREATE_FLAGS, 0o644);
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
      }
    }
    throw new BroodError('INVALID_CONFIG', `session ${id} already exists`, { details: { id, file } });
  }

  /** `seqs` and `bytes` were captured at call time; only the seq check needs the queue's view. */
  async function append(id: string, seqs: number[], bytes: Buffer): Promise<void> {
    const seq = await seqOf(id);
    checkSeqs(id, seqs, seq);
    if (seqs.length === 0) return;
    const writer = writers.get(id) as Writer;
    try {
      await pool.use(
        id,
        () => openForAppend(id),
        (handle) => writeAll(handle, bytes),
      );
    } catch (error) {
      writer.nextSeq = undefined; // the tail may be torn now; the next operation reloads and repairs it
      throw error;
    }
    writer.nextSeq = seq + seqs.length;
  }

  async function acquire(id: string): Promise<void> {
    const { writer } = await writerOf(id);
    if (writer.leased) {
      throw new BroodError(
        'SESSION_LOCKED',
        `session file ${fileOf(id)} is already open for writing by a runtime using this store (process ${process.pid})`,
        {
          details: { file: fileOf(id), lockFile: lockOf(id), pid: process.pid },
        },
      );
    }
    writer.leased = true;
  }

  async function flush(id: string): Promise<void> {
    await seqOf(id); // unknown id → NOT_RESUMABLE
    await pool.use(
      id,
      () => openForAppend(id),
      (handle) => handle.sync(),
    );
  }

  async function list(): Promise<SessionHeader[]> {
    if (closing !== undefined) throw new BroodError('DISPOSED', 'list: session store is closed');
    await queue.idle(); // sessions whose create() was called before list() are included
    let names: string[];
    try {
      names = await readdir(root);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
    const ids = names
      .filter((name) => name.endsWith(SUFFIX))
      .map((name) => name.slice(0, -SUFFIX.length))
      .filter(isSafeSessionId);
    const rows = await mapLimit(ids, LIST_CONCURRENCY, (id) => listRow(id));
    return rows
      .filter((row) => row !== undefined)
      .sort(byCreation)
      .map((row) => row.header);
  }

  async function listRow(id: string): Promise<ListRow | undefined> {
    try {
      const line = await readHeaderLine(fileOf(id), id);
      if (line.kind === 'ok')
        return { id, header: line.header, order: createOrder.get(id) ?? Infinity, birth: line.birthtimeNs };
      warn(`${fileOf(id)}: ${line.reason}; skipping session ${id} that was never created`);
      return undefined;
    } catch (error) {
      if (isNotFound(error)) return undefined; // removed between readdir and open
      const notFile = notAFile(error, fileOf(id));
      if (notFile === undefined) throw error;
      warn(`${notFile.message}; skipping it`);
      return undefined;
    }
  }

  return {
    dir: root,
    create(header) {
      let line: Buffer;
      try {
        line = Buffer.from(`${serialize(checkHeader(header), 'create')}\n`);
      } catch (error) {
        return Promise.reject(error);
      }
      return onSession(header.id, 'create', () => create(header.id, line));
    },
    append(id, events) {
      let seqs: number[];
      let bytes: Buffer;
      try {
        const batch = checkEventShapes(id, events);
        seqs = batch.map((event) => event.seq);
        bytes = Buffer.from(batch.map((event) => `${serialize(event, `append(${id})`)}\n`).join(''));
      } catch (error) {
        return Promise.reject(error);
      }
      return onSession(id, 'append', () => append(id, seqs, bytes));
    },
    flush: (id) => onSession(id, 'flush', () => flush(id)),
    // A reader: never takes the lock, never writes (a torn tail is left for its writer to repair).
    read: (id) => onSession(id, 'read', () => loadSessionFile(fileOf(id), id, warn, { repair: false })),
    list,
    acquire: (id) => onSession(id, 'acquire', () => acquire(id)),
    release: (id) => onSession(id, 'release', () => dropWriter(id)),
    close() {
      // Ops already queued finish; ops issued after close() reject with DISPOSED.
      closing ??= queue
        .idle()
        .then(() => pool.closeAll(true))
        .finally(() => Promise.all([...writers.keys()].map((id) => dropWriter(id))));
      return closing;
    },
  };
}

interface ListRow {
  id: string;
  header: SessionHeader;
  order: number;
  birth: bigint;
}

/**
 * Creation order, compared as the tuple (createdAt, order, birth, id):
 * - `createdAt`: the runtime's own clock, and what survives copying the directory elsewhere.
 * - ties (common: it has millisecond resolution) go to the call order of this instance's create()s,
 *   which is exact; sessions from earlier processes rank after those (Infinity), rarely mattering
 *   since their createdAt would have to hit the same millisecond.
 * - then file birth time (filesystem clock ticks are coarse, so ties remain; mtime is no creation
 *   signal because every append moves it; 0 where the filesystem does not record it),
 * - then id, which makes the order total and therefore stable across calls.
 */
function byCreation(a: ListRow, b: ListRow): number {
  if (a.header.createdAt !== b.header.createdAt) return a.header.createdAt - b.header.createdAt;
  if (a.order !== b.order) return a.order < b.order ? -1 : 1;
  if (a.birth !== b.birth) return a.birth < b.birth ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function serialize(value: unknown, op: string): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new BroodError('INVALID_CONFIG', `${op}: value is not JSON-serializable`, { cause: error });
  }
}

/** One write call for the whole buffer; loops only if the OS reports a short write. */
async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

/** fsync the directory so a freshly created file's name survives a crash too (best effort off Linux). */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms (Windows) cannot open or fsync a directory; the file itself is already synced.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
