// Preload (`node --require ./bench/lib/pool-probe.cjs <script>`) that looks inside every pool thread.
// Worker threads inherit the parent's --require, so this runs in each one; the main thread is left
// alone. Two probes, each on when its variable is set:
// - BROOD_ALLOC_MS=<ms>: samples what the thread allocates, collected objects included (what its GC
//   pays for, not what is live at the end), for <ms> from the thread's start, then writes
//   $BROOD_PROBE_DIR/pool-alloc-<threadId>.json; bench/allocation-top.mjs summarises the files.
// - BROOD_SNAPSHOT_AT=<ms>,<ms>,...: writes a heap snapshot from inside the thread at each time
//   (from the thread's start) as $BROOD_PROBE_DIR/pool-<threadId>-<i>.heapsnapshot, for
//   bench/heap-diff.mjs. (Node 20's worker.getHeapSnapshot() from the parent crashes the process once
//   a pool thread has run an activation; writing it from inside the thread does not.)
//   BROOD_PROBE_DIR=/tmp/probe BROOD_ALLOC_MS=10000 \
//     node --require ./bench/lib/pool-probe.cjs bench/profile-fanout.mjs worker 1000 1000 1 0 1000
const { isMainThread, threadId } = require('node:worker_threads');
const { mkdirSync, writeFileSync } = require('node:fs');

const dir = process.env.BROOD_PROBE_DIR ?? '/tmp/brood-probe';

function sampleAllocations(forMs) {
  const { Session } = require('node:inspector');
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // Not unref'd: the thread stays until its profile is written (a pool thread outlives the run anyway).
  setTimeout(() => {
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error) return console.error(`pool-probe: thread ${threadId}: ${error.message}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(`${dir}/pool-alloc-${threadId}.json`, JSON.stringify(result.profile));
    });
  }, forMs);
}

function snapshotsAt(times) {
  const { writeHeapSnapshot } = require('node:v8');
  for (const [i, at] of times.entries()) {
    setTimeout(() => {
      mkdirSync(dir, { recursive: true });
      writeHeapSnapshot(`${dir}/pool-${threadId}-${i}.heapsnapshot`);
      console.error(`pool-probe: thread ${threadId} snapshot ${i} at ${new Date().toISOString()}`);
    }, at);
  }
}

if (!isMainThread) {
  if (process.env.BROOD_ALLOC_MS) sampleAllocations(Number(process.env.BROOD_ALLOC_MS));
  if (process.env.BROOD_SNAPSHOT_AT) snapshotsAt(process.env.BROOD_SNAPSHOT_AT.split(',').map(Number));
}
