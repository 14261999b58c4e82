// Cost of the watch board (src/thread/thread-watch.ts): the same async workload — the callback mix of
// a driver between I/O events (immediates, awaited continuations) — runs in a fresh worker thread
// with no watch, with the thread's watch (V8 promise hooks tagging promises with the activation, and
// the scheduling globals wrapped, as thread-watch.ts does), and with the design it replaced (an
// AsyncLocalStorage and an async hook). The difference per callback is the price of attributing a
// thread death to the activation that was executing.
import { Worker } from 'node:worker_threads';

const WORKLOAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { AsyncLocalStorage, createHook } = require('node:async_hooks');
const { promiseHooks } = require('node:v8');
const board = new Int32Array(new SharedArrayBuffer(8));
let run = (token, fn) => fn();
if (workerData.watch === 'async-hooks') {
  const store = new AsyncLocalStorage();
  createHook({
    before() { const t = store.getStore(); if (t !== undefined) Atomics.store(board, 0, t); },
    after() { if (store.getStore() !== undefined) Atomics.store(board, 0, 0); },
  }).enable();
  run = (token, fn) => store.run(token, fn);
}
if (workerData.watch === 'promise-hooks') {
  const TOKEN = Symbol('activation');
  let current = 0;
  const enter = (token) => { current = token; Atomics.store(board, 0, token); };
  const leave = () => { if (current !== 0) { current = 0; Atomics.store(board, 0, 0); } };
  promiseHooks.createHook({
    init(promise) { if (current !== 0) promise[TOKEN] = current; },
    before(promise) { const t = promise[TOKEN]; if (t !== undefined) enter(t); },
    after: leave,
  });
  for (const name of ['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask']) {
    const schedule = globalThis[name];
    globalThis[name] = function (callback, ...rest) {
      if (current === 0 || typeof callback !== 'function') return schedule.call(this, callback, ...rest);
      const token = current;
      return schedule.call(this, function (...args) { enter(token); const r = callback.apply(this, args); leave(); return r; }, ...rest);
    };
  }
  run = (token, fn) => { enter(token); try { return fn(); } finally { enter(0); } };
}
async function step() {
  await new Promise((resolve) => setImmediate(resolve));
  await Promise.resolve();
  await new Promise((resolve) => queueMicrotask(resolve));
}
async function work(iterations) {
  for (let i = 0; i < iterations; i += 1) await step();
}
run(7, async () => {
  await work(200); // warm-up
  const start = performance.now();
  await work(workerData.iterations);
  parentPort.postMessage(performance.now() - start);
});
`;

function runOnce(watch, iterations) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKLOAD, { eval: true, workerData: { watch, iterations } });
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
  const asyncHooks = [];
  // Interleaved rounds so machine-load drift affects every side alike; medians compared.
  for (let round = 0; round < rounds; round += 1) {
    plain.push(await runOnce('none', iterations));
    hooked.push(await runOnce('promise-hooks', iterations));
    asyncHooks.push(await runOnce('async-hooks', iterations));
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const plainMs = median(plain);
  const hookedMs = median(hooked);
  const asyncHooksMs = median(asyncHooks);
  // Three awaited callbacks per step (an immediate and two promise continuations).
  const nsPerCallback = (ms) => Number((((ms - plainMs) * 1e6) / (iterations * 3)).toFixed(0));
  const result = {
    iterations,
    plainMs: Number(plainMs.toFixed(2)),
    hookedMs: Number(hookedMs.toFixed(2)),
    ratio: Number((hookedMs / plainMs).toFixed(3)),
    nsPerCallback: nsPerCallback(hookedMs),
    asyncHooksMs: Number(asyncHooksMs.toFixed(2)),
    asyncHooksRatio: Number((asyncHooksMs / plainMs).toFixed(3)),
    asyncHooksNsPerCallback: nsPerCallback(asyncHooksMs),
  };
  log(
    `watch hook: ${result.hookedMs} ms with vs ${result.plainMs} ms without (${result.ratio}×, ${result.nsPerCallback} ns per callback); the async_hooks design it replaced ${result.asyncHooksMs} ms (${result.asyncHooksRatio}×, ${result.asyncHooksNsPerCallback} ns)`,
  );
  return result;
}
