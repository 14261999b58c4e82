/**
 * `fileSessions(dir)`: one JSONL file per session, `<dir>/<id>.jsonl` — header line, then one event
 * per line (SPEC §6). Durability: create and flush fsync; under `sync: 'turn'` (the default) append
 * only writes (the runtime flushes at the points SPEC §6 requires); under `sync: 'step'` an append that
 * carries a model answer or a tool call also resolves only once fsynced. Flushes and step syncs are
 * group-committed (jsonl-sync.ts); creating, appending to and syncing the files is jsonl-files.ts.
 *
 * One writer per session: a store instance writes a session only while it holds the session's lock
 * file (lock.ts), taken by create(), acquire() or the first append, and dropped by release() or
 * close(). Readers (read, list) never take it and never modify a file: a torn last line is "not yet
 * written" to them; only the writer repairs it, when it opens the session for append.
 */

import type { FileHandle } from 'node:fs/promises';
import { mkdir, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { BroodError } from '../errors.js';
import type { SessionEvent, SessionHeader, SessionStore } from '../types.js';
import { describe } from '../util/describe.js';
import { parseConfig } from '../util/untrusted.js';
import { HandlePool } from './handles.js';
import { SessionFileCache } from './jsonl-cache.js';
import { appendAll, createSessionFile, openAppendOnly, syncDirectory } from './jsonl-files.js';
import { inCreationOrder, type ListRow } from './jsonl-list.js';
import type { Warn } from './jsonl-load.js';
import { isNotFound, loadSessionFile, notAFile, readHeaderLine, unknownSession } from './jsonl-load.js';
import { GroupCommit, needsStepSync, type SyncMode } from './jsonl-sync.js';
import { acquireSessionLock, type SessionLock } from './lock.js';
import { LockRecords } from './lock-records.js';
import { SessionSerial } from './serial.js';
import { checkEventShapes, checkHeader, checkSeqs } from './validate.js';

export interface FileSessionOptions {
  /** Told about repairs and skipped files (torn tails, never-created sessions). Default: ignore. */
  onWarning?: (message: string) => void;
  /** How many session files may stay open at once (LRU). Default 64. */
  maxOpenFiles?: number;
  /**
   * When appends are fsynced. `'turn'` (default): at turn boundaries; a machine crash may lose the
   * last turn's steps. `'step'`: also after each model answer and before each tool call's body starts.
   */
  sync?: SyncMode;
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
  /** Nothing written since this instance fsynced the file (or created it, fsynced): a flush has nothing to do. */
  synced: boolean;
}

const ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
const SUFFIX = '.jsonl';
const LOCK_SUFFIX = '.lock';

export function isSafeSessionId(id: unknown): id is string {
  return typeof id === 'string' && ID_PATTERN.test(id) && id !== '.' && id !== '..';
}

const optionsSchema = z.strictObject({
  onWarning: z.custom<(message: string) => void>((value) => typeof value === 'function', 'a function').optional(),
  maxOpenFiles: z.number().int().positive().optional(),
  sync: z.enum(['turn', 'step']).optional(),
});

export function fileSessions(dir: string, input: FileSessionOptions = {}): FileSessionStore {
  if (typeof dir !== 'string' || dir === '')
    throw new BroodError('INVALID_CONFIG', `fileSessions needs a directory path, got ${describe(dir)}`);
  return new JsonlSessionStore(resolve(dir), parseConfig(optionsSchema, input, 'fileSessions options'));
}

/**
 * The store fileSessions returns. Its SessionStore methods are own, bound properties, so a store's
 * methods may be passed around on their own (or the store spread into another object).
 */
class JsonlSessionStore implements FileSessionStore {
  private readonly warn: Warn;
  private readonly pool: HandlePool;
  // What was read of each session, so reading it again while unchanged costs a stat.
  private readonly files = new SessionFileCache();
  private readonly locks: LockRecords;
  private readonly queue = new SessionSerial();
  private readonly syncMode: SyncMode;
  private readonly group = new GroupCommit(
    (id, task) => this.queue.run(id, task),
    (id) => this.syncFile(id),
  );
  // Sessions this instance writes (holds the lock of). A writer whose nextSeq is unknown loads the
  // file, repairing a torn tail, before its next append.
  private readonly writers = new Map<string, Writer>();
  // Call order of this instance's creates: the exact tie-break list() needs when createdAt collides.
  private readonly createOrder = new Map<string, number>();
  private dirReady: Promise<unknown> | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    options: FileSessionOptions,
  ) {
    this.warn = options.onWarning ?? (() => undefined);
    this.pool = new HandlePool(options.maxOpenFiles ?? 64);
    this.locks = new LockRecords(dir);
    this.syncMode = options.sync ?? 'turn';
  }

  readonly create = (header: SessionHeader): Promise<void> => {
    let line: Buffer;
    try {
      line = Buffer.from(`${serialize(checkHeader(header), 'create')}\n`);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.onSession(header.id, 'create', () => this.createFile(header.id, line));
  };

  readonly append = (id: string, events: SessionEvent[]): Promise<void> => {
    let seqs: number[];
    let bytes: Buffer;
    let durable: boolean;
    try {
      const batch = checkEventShapes(id, events);
      seqs = batch.map((event) => event.seq);
      bytes = Buffer.from(batch.map((event) => `${serialize(event, `append(${id})`)}\n`).join(''));
      durable = this.syncMode === 'step' && needsStepSync(batch);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.onSession(id, 'append', async () => {
      await this.appendBytes(id, seqs, bytes);
      return durable && seqs.length > 0 ? this.joinSync(id) : {};
    }).then(untilDurable);
  };

  readonly flush = (id: string): Promise<void> =>
    this.onSession(id, 'flush', async () => {
      await this.seqOf(id); // unknown id → NOT_RESUMABLE
      return this.joinSync(id);
    }).then(untilDurable);

  // A reader: never takes the lock, never writes (a torn tail is left for its writer to repair).
  readonly read = (id: string): Promise<{ header: SessionHeader; events: SessionEvent[] }> =>
    this.onSession(id, 'read', async () => {
      const { header, events, torn } = await loadSessionFile(this.fileOf(id), id, this.warn, {
        repair: false,
        cache: this.files,
      });
      // When this instance writes the session nobody else appends to it, and none of its own appends is
      // in flight (they queue like this read): what was read is where the next append starts.
      const writer = this.writers.get(id);
      if (writer !== undefined && writer.nextSeq === undefined && !torn) writer.nextSeq = events.length;
      return { header, events };
    });

  readonly list = async (): Promise<SessionHeader[]> => {
    if (this.closing !== undefined) throw new BroodError('DISPOSED', 'list: session store is closed');
    await this.queue.idle(); // sessions whose create() was called before list() are included
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
    const ids = names
      .filter((name) => name.endsWith(SUFFIX))
      .map((name) => name.slice(0, -SUFFIX.length))
      .filter(isSafeSessionId);
    return inCreationOrder(ids, (id) => this.listRow(id));
  };

  readonly acquire = (id: string): Promise<void> => this.onSession(id, 'acquire', () => this.lease(id));

  readonly release = (id: string): Promise<void> => this.onSession(id, 'release', () => this.dropWriter(id));

  readonly close = (): Promise<void> => {
    // Ops already queued finish; ops issued after close() reject with DISPOSED.
    this.closing ??= this.queue
      .idle()
      .then(() => this.group.idle())
      .then(() => this.pool.closeAll(true))
      .then(() => this.files.clear())
      .finally(() => Promise.all([...this.writers.keys()].map((id) => this.dropWriter(id))))
      .then(() => this.locks.idle());
    return this.closing;
  };

  /**
   * Asks the group commit for an fsync from inside a queued operation, so close() (queue idle, then
   * group idle) waits for it. Wrapped, so the operation does not wait for its own fsync: that is
   * queued behind it, and behind every operation already queued on the session, which share it.
   */
  private joinSync(id: string): { durable?: Promise<void> } {
    return { durable: this.group.durable(id) };
  }

  private fileOf(id: string): string {
    return join(this.dir, id + SUFFIX);
  }

  private lockOf(id: string): string {
    return join(this.dir, id + SUFFIX + LOCK_SUFFIX);
  }

  private ensureDir(): Promise<unknown> {
    this.dirReady ??= mkdir(this.dir, { recursive: true }).catch((error: unknown) => {
      this.dirReady = undefined; // let a later call retry (e.g. permissions fixed)
      throw error;
    });
    return this.dirReady;
  }

  /** Validates the id and runs `task` on that session's queue. */
  private onSession<T>(id: string, op: string, task: () => Promise<T>): Promise<T> {
    if (this.closing !== undefined) return Promise.reject(new BroodError('DISPOSED', `${op}: session store is closed`));
    if (!isSafeSessionId(id)) {
      return Promise.reject(
        new BroodError('INVALID_CONFIG', `${op}: session id ${JSON.stringify(id)} is not a safe file name`, {
          details: { id },
        }),
      );
    }
    return this.queue.run(id, task);
  }

  /** Takes the lock unless this instance already writes the session. */
  private async writerOf(id: string): Promise<{ writer: Writer; fresh: boolean }> {
    const existing = this.writers.get(id);
    if (existing !== undefined) return { writer: existing, fresh: false };
    await this.ensureDir();
    const writer: Writer = {
      lock: await acquireSessionLock(this.locks, this.lockOf(id), this.fileOf(id)),
      nextSeq: undefined,
      leased: false,
      synced: false,
    };
    this.writers.set(id, writer);
    return { writer, fresh: true };
  }

  private async dropWriter(id: string): Promise<void> {
    const writer = this.writers.get(id);
    if (writer === undefined) return;
    this.writers.delete(id);
    this.pool.drop(id); // its runtime is done with it: the descriptor is free for a session being written
    await writer.lock.release();
  }

  /** The writer's next seq: loads the file once under the lock, repairing a torn tail on disk. */
  private async seqOf(id: string): Promise<number> {
    const { writer, fresh } = await this.writerOf(id);
    if (writer.nextSeq !== undefined) return writer.nextSeq;
    try {
      const loaded = await loadSessionFile(this.fileOf(id), id, this.warn, { repair: true, cache: this.files });
      writer.nextSeq = loaded.events.length;
    } catch (error) {
      if (fresh) await this.dropWriter(id); // e.g. an unknown session: hold no lock for it
      throw error;
    }
    return writer.nextSeq;
  }

  private async openForAppend(id: string): Promise<FileHandle> {
    try {
      return await openAppendOnly(this.fileOf(id));
    } catch (error) {
      if (isNotFound(error)) {
        const writer = this.writers.get(id);
        if (writer !== undefined) writer.nextSeq = undefined;
        throw unknownSession(id, this.fileOf(id));
      }
      throw error;
    }
  }

  private async createFile(id: string, line: Buffer): Promise<void> {
    const { writer, fresh } = await this.writerOf(id);
    this.files.forget(this.fileOf(id));
    let handle: FileHandle;
    try {
      handle = await createSessionFile(this.fileOf(id), id, line, this.warn);
    } catch (error) {
      if (fresh) await this.dropWriter(id);
      throw error;
    }
    this.pool.adopt(id, handle);
    writer.nextSeq = 0;
    writer.synced = true;
    this.createOrder.set(id, this.createOrder.size);
    await syncDirectory(this.dir);
  }

  /** `seqs` and `bytes` were captured at call time; only the seq check needs the queue's view. */
  private async appendBytes(id: string, seqs: number[], bytes: Buffer): Promise<void> {
    const seq = await this.seqOf(id);
    checkSeqs(id, seqs, seq);
    if (seqs.length === 0) return;
    const writer = this.writers.get(id) as Writer;
    this.files.forget(this.fileOf(id)); // the file changes: what was read of it is of no more use
    writer.synced = false;
    try {
      await this.pool.use(
        id,
        () => this.openForAppend(id),
        (handle) => appendAll(handle, bytes),
      );
    } catch (error) {
      writer.nextSeq = undefined; // the tail may be torn now; the next operation reloads and repairs it
      throw error;
    }
    writer.nextSeq = seq + seqs.length;
  }

  private async lease(id: string): Promise<void> {
    const { writer } = await this.writerOf(id);
    if (writer.leased) {
      throw new BroodError(
        'SESSION_LOCKED',
        `session file ${this.fileOf(id)} is already open for writing by a runtime using this store (process ${process.pid})`,
        {
          details: { file: this.fileOf(id), lockFile: this.lockOf(id), pid: process.pid },
        },
      );
    }
    writer.leased = true;
  }

  /**
   * One fsync of the session's file (a group-commit round's work for this session), unless nothing was
   * written since the last one: a turn's end and its agent's disposal both flush, one fsync serves both.
   * It runs on the session's queue, so no write of this instance is in flight meanwhile.
   */
  private async syncFile(id: string): Promise<void> {
    const writer = this.writers.get(id);
    if (writer?.synced) return;
    await this.pool.use(
      id,
      () => this.openForAppend(id),
      (handle) => handle.sync(),
    );
    if (writer !== undefined) writer.synced = true;
  }

  private async listRow(id: string): Promise<ListRow | undefined> {
    const file = this.fileOf(id);
    try {
      const line = await readHeaderLine(file, id, this.files);
      if (line.kind === 'ok')
        return { id, header: line.header, order: this.createOrder.get(id) ?? Infinity, birth: line.birthtimeNs };
      this.warn(`${file}: ${line.reason}; skipping session ${id} that was never created`);
      return undefined;
    } catch (error) {
      if (isNotFound(error)) return undefined; // removed between readdir and open
      const notFile = notAFile(error, file);
      if (notFile === undefined) throw error;
      this.warn(`${notFile.message}; skipping it`);
      return undefined;
    }
  }
}

function untilDurable(queued: { durable?: Promise<void> }): Promise<void> | undefined {
  return queued.durable;
}

function serialize(value: unknown, op: string): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new BroodError('INVALID_CONFIG', `${op}: value is not JSON-serializable`, { cause: error });
  }
}
