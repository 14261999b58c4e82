// Cost of the watch board's async hook (src/thread/thread-watch.ts): the same async workload — the
// callback mix of a driver between I/O events (immediates, awaited continuations) — runs in a fresh
// worker thread with and without an identical hook enabled; the difference per callback is the price
// of attributing a thread death to the activation that was executing.
import { Worker } from 'node:worker_threads';

const WORKLOAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { AsyncLocalStorage, createHook } = require('node:async_hooks');
const board = new Int32Array(new SharedArrayBuffer(8));
const store = new AsyncLocalStorage();
if (workerData.hook) {
  createHook({
    before() { const t = store.getStore(); if (t !== undefined) Atomics.store(board, 0, t); },
    after() { if (store.getStore() !== undefined) Atomics.store(board, 0, 0); },
  }).enable();
}
async function step() {
  await new Promise((resolve) => setImmediate(resolve));
  await Promise.resolve();
  await new Promise((resolve) => queueMicrotask(resolve));
}
async function work(iterations) {
  for (let i = 0; i < iterations; i += 1) await step();
}
store.run(7, async () => {
  await work(200); // warm-up
  const start = performance.now();
  await work(workerData.iterations);
  parentPort.postMessage(performance.now() - start);
});
`;

function runOnce(hook, iterations) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKLOAD, { eval: true, workerData: { hook, iterations } });
    worker.once('message', (ms) => {
      void worker.terminate();
      resolve(ms);
    });
    worker.once('error', reject);
  });
}

export async function runWatchHook({ quick, log }) {
  const iterations = quick ? 20_000 : 100_000;
  const rounds = quick ? 3 : 7;
  const plain = [];
  const hooked = [];
  // Interleaved rounds so machine-load drift affects both sides alike; medians compared.
  for (let round = 0; round < rounds; round += 1) {
    plain.push(await runOnce(false, iterations));
    hooked.push(await runOnce(true, iterations));
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const plainMs = median(plain);
  const hookedMs = median(hooked);
  // Three awaited callbacks per step (an immediate and two promise continuations).
  const callbacks = iterations * 3;
  const result = {
    iterations,
    plainMs: Number(plainMs.toFixed(2)),
    hookedMs: Number(hookedMs.toFixed(2)),
    ratio: Number((hookedMs / plainMs).toFixed(3)),
    nsPerCallback: Number((((hookedMs - plainMs) * 1e6) / callbacks).toFixed(0)),
  };
  log(
    `watch hook: ${result.hookedMs} ms with vs ${result.plainMs} ms without (${result.ratio}×, ${result.nsPerCallback} ns per callback)`,
  );
  return result;
}
