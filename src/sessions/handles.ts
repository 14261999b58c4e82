/**
 * A small LRU of open file handles. A runtime may hold thousands of sessions; keeping one descriptor
 * per session would exhaust the process's fd limit, so only the most recently used `cap` stay open.
 *
 * A handle that is in use (pinned) is never evicted: closing it under an in-flight write would lose
 * data. If every cached handle is pinned the pool briefly exceeds `cap` instead (a soft cap).
 */
import type { FileHandle } from 'node:fs/promises';

interface Entry {
  handle: Promise<FileHandle>;
  pins: number;
}

export class HandlePool {
  // Map iteration order doubles as recency order: oldest first, re-inserted on every use.
  readonly #entries = new Map<string, Entry>();
  readonly #closing = new Set<Promise<void>>();

  constructor(readonly cap: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** Runs `fn` with the cached handle for `key`, opening one with `open` when none is cached. */
  async use<T>(key: string, open: () => Promise<FileHandle>, fn: (handle: FileHandle) => Promise<T>): Promise<T> {
    let entry = this.#entries.get(key);
    if (entry === undefined) entry = { handle: open(), pins: 0 };
    else this.#entries.delete(key);
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
    this.#entries.set(key, { handle: Promise.resolve(handle), pins: 0 });
    this.#evict();
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
