// Preload (`node --require bench/lib/pool-allocations.cjs <script>`) that samples what every pool
// thread allocates, collected objects included, so a profile shows allocation rate (what the thread's
// GC pays for) rather than what is live at the end. Worker threads inherit the parent's --require, so
// this runs in each one; the main thread is left alone. Each thread writes
// $BROOD_ALLOC_DIR/pool-alloc-<threadId>.json after $BROOD_ALLOC_MS (default 15 s) of sampling;
// bench/allocation-top.mjs summarises the files.
//   BROOD_ALLOC_DIR=/tmp/alloc BROOD_ALLOC_MS=10000 \
//     node --require ./bench/lib/pool-allocations.cjs bench/profile-fanout.mjs worker 1000 1000 1 0 1000
const { isMainThread, threadId } = require('node:worker_threads');

if (!isMainThread) {
  const { Session } = require('node:inspector');
  const { mkdirSync, writeFileSync } = require('node:fs');
  const dir = process.env.BROOD_ALLOC_DIR ?? '/tmp/brood-alloc';
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // Not unref'd: the thread stays until its profile is written (a pool thread outlives the run anyway).
  setTimeout(
    () => {
      session.post('HeapProfiler.stopSampling', (error, result) => {
        if (error) return console.error(`pool-allocations: thread ${threadId}: ${error.message}`);
        mkdirSync(dir, { recursive: true });
        writeFileSync(`${dir}/pool-alloc-${threadId}.json`, JSON.stringify(result.profile));
      });
    },
    Number(process.env.BROOD_ALLOC_MS ?? 15_000),
  );
}
