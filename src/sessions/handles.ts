/**
 * A small LRU of open file handles. A runtime may hold thousands of sessions; keeping one descriptor
 * per session would exhaust the process's fd limit, so only the most recently used `cap` stay open.
 *
 * A handle that is in use (pinned) is never evicted: closing it under an in-flight write would lose
 * data. If every cached handle is pinned the pool briefly exceeds `cap` instead (a soft cap).
 *
 * Plain LRU thrashes when slightly more sessions than `cap` write in turn (a fan-out of 64 children
 * and their parent: every write would open a file and close another). So a full pool evicts only a
 * cold handle, one not used in the last `4 × cap` uses; while every cached handle is warm, a session
 * without one writes through a handle opened for that use alone, and the warm ones keep hitting.
 */
import type { FileHandle } from 'node:fs/promises';

interface Entry {
  handle: Promise<FileHandle>;
  pins: number;
  /** The pool's use count at this entry's last use. */
  used: number;
}

/** A cached handle is cold once the pool has served this many times `cap` uses since its own last use. */
const COLD_AFTER_CAPS = 4;

export class HandlePool {
  // Map iteration order doubles as recency order: oldest first, re-inserted on every use.
  readonly #entries = new Map<string, Entry>();
  readonly #closing = new Set<Promise<void>>();
  #uses = 0;

  constructor(readonly cap: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** Runs `fn` with the cached handle for `key`, opening one with `open` when none is cached. */
  async use<T>(key: string, open: () => Promise<FileHandle>, fn: (handle: FileHandle) => Promise<T>): Promise<T> {
    this.#uses += 1;
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      if (!this.#roomForOne()) return this.#once(open, fn);
      entry = { handle: open(), pins: 0, used: this.#uses };
    } else {
      this.#entries.delete(key);
      entry.used = this.#uses;
    }
    this.#entries.set(key, entry);
    entry.pins += 1;
    try {
      let handle: FileHandle;
      try {
        handle = await entry.handle;
      } catch (error) {
        // A failed open must not stay cached, or every later use would replay the failure.
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
        throw error;
      }
      return await fn(handle);
    } finally {
      entry.pins -= 1;
      this.#evict();
    }
  }

  /** Caches a handle opened elsewhere (the exclusive create) so the first append reuses it. */
  adopt(key: string, handle: FileHandle): void {
    const previous = this.#entries.get(key);
    if (previous !== undefined) {
      this.#entries.delete(key);
      this.#close(previous);
    }
    this.#uses += 1;
    const entry = { handle: Promise.resolve(handle), pins: 0, used: this.#uses };
    if (!this.#roomForOne()) {
      this.#close(entry);
      return;
    }
    this.#entries.set(key, entry);
  }

  /** Closes `key`'s handle now unless it is in use (its session will not be written through this pool soon). */
  drop(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.pins > 0) return;
    this.#entries.delete(key);
    this.#close(entry);
  }

  /** Syncs (when asked) and closes every handle; waits for evictions still closing. */
  async closeAll(sync: boolean): Promise<void> {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(
      entries.map(async (entry) => {
        const handle = await entry.handle.catch(() => undefined);
        if (handle === undefined) return;
        try {
          if (sync) await handle.sync();
        } finally {
          await handle.close();
        }
      }),
    );
    await Promise.all(this.#closing);
  }

  /** A use without caching: the handle is opened for `fn` and closed after it. */
  async #once<T>(open: () => Promise<FileHandle>, fn: (handle: FileHandle) => Promise<T>): Promise<T> {
    const handle = open();
    try {
      return await fn(await handle);
    } finally {
      this.#close({ handle, pins: 0, used: 0 });
    }
  }

  /** Whether one more entry fits, after evicting the least recently used one if it is cold. */
  #roomForOne(): boolean {
    if (this.#entries.size < this.cap) return true;
    for (const [key, entry] of this.#entries) {
      if (entry.pins > 0) continue;
      if (this.#uses - entry.used < COLD_AFTER_CAPS * this.cap) return false;
      this.#entries.delete(key);
      this.#close(entry);
      return this.#entries.size < this.cap;
    }
    return false;
  }

  #evict(): void {
    if (this.#entries.size <= this.cap) return;
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= this.cap) return;
      if (entry.pins > 0) continue;
      this.#entries.delete(key);
      this.#close(entry);
    }
  }

  #close(entry: Entry): void {
    // Closing without fsync is fine: a later flush() fsyncs through a fresh descriptor, and fsync
    // covers the file's dirty data regardless of which descriptor wrote it.
    const closing = entry.handle.then((handle) => handle.close()).catch(() => undefined);
    this.#closing.add(closing);
    void closing.then(() => this.#closing.delete(closing));
  }
}
