// The pool's worker threads, for measurements that must collect garbage in every isolate: `gc()`
// collects only the calling one, and a pool thread's old generation can hold hundreds of MB of its
// drivers' garbage until V8 decides to collect it (its cap is 1 GB), which an RSS figure would then
// charge to whatever was being measured. Importing this module records every Worker started after it.
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import workerThreads from 'node:worker_threads';

const live = new Set();
const Base = workerThreads.Worker;
workerThreads.Worker = class RecordedWorker extends Base {
  constructor(...args) {
    super(...args);
    live.add(this);
    this.once('exit', () => live.delete(this));
  }
};

/**
 * A full GC in every recorded pool thread (taking a heap snapshot runs one first). The snapshots are
 * discarded, or written to `<prefix>-w<n>.heapsnapshot` when a prefix is given (for bench/heap-diff.mjs).
 */
export async function collectPoolThreads(prefix) {
  let n = 0;
  for (const worker of live) {
    try {
      const snapshot = await worker.getHeapSnapshot();
      if (prefix) await pipeline(snapshot, createWriteStream(`${prefix}-w${n++}.heapsnapshot`));
      else for await (const _chunk of snapshot);
    } catch {
      // A thread that ended meanwhile has nothing left to collect.
    }
  }
}
