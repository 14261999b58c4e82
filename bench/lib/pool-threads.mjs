// The pool's worker threads, for measurements that must collect garbage in every isolate: `gc()`
// collects only the calling one, and a pool thread's old generation can hold hundreds of MB of its
// drivers' garbage until V8 decides to collect it (its cap is 1 GB), which an RSS figure would then
// charge to whatever was being measured. Importing this module records every Worker started after it.
import { createWriteStream } from 'node:fs';
import { Session } from 'node:inspector';
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
 * A full GC in every pool thread. Without a prefix it asks each thread's V8 through the inspector
 * (`NodeWorker` → `HeapProfiler.collectGarbage`), which leaves nothing behind. With a prefix it writes
 * each thread's heap snapshot to `<prefix>-w<n>.heapsnapshot` (for bench/heap-diff.mjs); taking one
 * runs a full GC first, but leaves the profiler's machinery in the thread (~10 MB) and V8 reporting
 * every object move to it, which made that thread's scavenges ~5× slower for the rest of the process.
 */
export async function collectPoolThreads(prefix) {
  if (!prefix) return collectThroughInspector();
  let n = 0;
  for (const worker of live) {
    try {
      const snapshot = await worker.getHeapSnapshot();
      await pipeline(snapshot, createWriteStream(`${prefix}-w${n++}.heapsnapshot`));
    } catch {
      // A thread that ended meanwhile has nothing left to collect.
    }
  }
}

async function collectThroughInspector() {
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (e, out) => (e ? reject(e) : resolve(out))));
  const workers = [];
  const replies = new Map();
  session.on('NodeWorker.attachedToWorker', ({ params }) => workers.push(params.sessionId));
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    const message = JSON.parse(params.message);
    replies.get(`${params.sessionId}:${message.id}`)?.(message);
  });
  try {
    await post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await new Promise((resolve) => setTimeout(resolve, 50)); // attachment events for the running threads
    for (const sessionId of workers) {
      const reply = new Promise((resolve) => replies.set(`${sessionId}:1`, resolve));
      const message = JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' });
      await post('NodeWorker.sendMessageToWorker', { sessionId, message });
      await Promise.race([reply, new Promise((resolve) => setTimeout(resolve, 30_000))]);
      await post('NodeWorker.detach', { sessionId }).catch(() => {}); // a thread that ended meanwhile
    }
  } finally {
    await post('NodeWorker.disable').catch(() => {});
    session.disconnect();
  }
}
