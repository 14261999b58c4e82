/**
 * What fileSessions remembers of the session files it has read, so that reading one again costs one
 * stat instead of an open, a read and a close. A crash recovery reads every session several times (to
 * check the whole store, to find each delegation call's child, to restore each agent); with a thousand
 * sessions those reads were most of the time to get the tree running again.
 *
 * A remembered read is used only while the file is unchanged: the same file (device, inode, birth time),
 * the same size and the same modification time. A change made within one tick of the file system's
 * clock may leave the time as it was, so a read is remembered only when the file's time was already
 * well behind the clock when it was read (git's "racily clean" rule): a file written a moment ago is
 * read from disk again until it has been quiet for a while. Only reads that ended on a complete line
 * are remembered. What is kept is bytes, parsed again on every use (checked only the first time: the
 * same bytes pass the same checks), so no two callers ever share an object. Bounded: least recently
 * used first out.
 */
import type { BigIntStats } from 'node:fs';
import { stat } from 'node:fs/promises';

export interface RememberedFile {
  stat: BigIntStats;
  /** The header line, without its newline; always one that passed the header check. */
  header: Buffer;
  /** The whole file, when it was read whole. */
  whole?: Buffer;
  /** `whole` passed the full parse (every line checked): the same bytes need no checking again. */
  checked?: boolean;
}

/** Timestamps with sub-millisecond digits tick at least every 10 ms (Linux: one jiffy); keep 5 ticks clear. */
const FINE_CLOCK_MARGIN_NS = 50_000_000n;
/** Timestamps in whole milliseconds or seconds may tick as rarely as every 2 s (FAT). */
const COARSE_CLOCK_MARGIN_NS = 4_000_000_000n;
const DEFAULT_BUDGET_BYTES = 16 * 1024 * 1024;

export class SessionFileCache {
  // Map iteration order doubles as recency order: oldest first, re-inserted on every hit.
  readonly #entries = new Map<string, RememberedFile>();
  #bytes = 0;

  constructor(
    readonly budgetBytes = DEFAULT_BUDGET_BYTES,
    private readonly nowNs: () => bigint = () => BigInt(Date.now()) * 1_000_000n,
  ) {}

  /**
   * What was remembered of `file`, if it is still the same, unchanged file (one stat); else undefined.
   * `whole`: only a whole file will do (no stat is spent on a remembered header line).
   */
  async lookup(file: string, want: 'header' | 'whole'): Promise<RememberedFile | undefined> {
    const entry = this.#entries.get(file);
    if (entry === undefined || (want === 'whole' && entry.whole === undefined)) return undefined;
    let now: BigIntStats;
    try {
      now = await stat(file, { bigint: true });
    } catch {
      this.forget(file); // gone or unreadable: the caller's own read reports it
      return undefined;
    }
    if (this.#entries.get(file) !== entry) return undefined; // replaced or forgotten meanwhile
    if (!unchanged(entry.stat, now)) {
      this.forget(file);
      return undefined;
    }
    this.#entries.delete(file);
    this.#entries.set(file, entry);
    return entry;
  }

  /** Remembers a read of `file` taken while it had `stat` (skipped when the file changed too recently). */
  remember(file: string, entry: RememberedFile): void {
    this.forget(file);
    const cost = costOf(entry);
    if (cost > this.budgetBytes || !settled(entry.stat, this.nowNs())) return;
    this.#entries.set(file, entry);
    this.#bytes += cost;
    for (const [key, old] of this.#entries) {
      if (this.#bytes <= this.budgetBytes) break;
      this.#entries.delete(key);
      this.#bytes -= costOf(old);
    }
  }

  forget(file: string): void {
    const entry = this.#entries.get(file);
    if (entry === undefined) return;
    this.#entries.delete(file);
    this.#bytes -= costOf(entry);
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}

/** The memory an entry keeps alive: a Buffer may be a view into a larger allocation (a pooled slab). */
function costOf(entry: RememberedFile): number {
  return (entry.whole ?? entry.header).buffer.byteLength;
}

function unchanged(then: BigIntStats, now: BigIntStats): boolean {
  return (
    then.dev === now.dev &&
    then.ino === now.ino &&
    then.birthtimeNs === now.birthtimeNs &&
    then.size === now.size &&
    then.mtimeNs === now.mtimeNs &&
    then.ctimeNs === now.ctimeNs
  );
}

/**
 * The file's change time (which every write moves, and which no one can set back) is far enough behind
 * the clock that any later change must move it.
 */
function settled(stats: BigIntStats, nowNs: bigint): boolean {
  const margin = stats.ctimeNs % 1_000_000n === 0n ? COARSE_CLOCK_MARGIN_NS : FINE_CLOCK_MARGIN_NS;
  return nowNs - stats.ctimeNs > margin;
}
