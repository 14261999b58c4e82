// The calibrated floor: the fan-out schedule with bare timers and CPU burns on worker threads and
// no brood code. It measures what this machine, right now, can do at best (timer slack, thread
// hand-off, CPU contention from other processes), so brood's overhead is read as makespan / floor.
import { Worker } from 'node:worker_threads';
import { K, L, THREADS } from './lib/schedule.mjs';
import { sleep } from './lib/stats.mjs';

// Same busy loop as the scripted model; a burn request is just a number of ms.
const BURNER = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, ms }) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {}
  parentPort.postMessage(id);
});`;

/** A minimal FIFO pool: as many burner threads as brood's pool, each burning one request at a time. */
export function burnerPool(threads = THREADS) {
  const idle = [];
  const queue = [];
  const pending = new Map();
  let nextId = 0;
  const workers = Array.from({ length: threads }, () => {
    const w = new Worker(BURNER, { eval: true });
    w.on('message', (id) => {
      pending.get(id)();
      pending.delete(id);
      const job = queue.shift();
      if (job) dispatch(w, job);
      else idle.push(w);
    });
    idle.push(w);
    return w;
  });
  function dispatch(w, job) {
    pending.set(job.id, job.resolve);
    w.postMessage({ id: job.id, ms: job.ms });
  }
  return {
    burn(ms) {
      return new Promise((resolve) => {
        const job = { id: nextId++, ms, resolve };
        const w = idle.pop();
        if (w) dispatch(w, job);
        else queue.push(job);
      });
    },
    close: () => Promise.all(workers.map((w) => w.terminate())),
  };
}

/** Runs `task(i)` for i < n with at most `limit` in flight, starting in index order (like the tool pool). */
export async function limited(n, limit, task) {
  let next = 0;
  const lane = async () => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, lane));
}

/**
 * One fan-out on the floor: parent request, N children × K requests under P, parent request, each
 * request `latencyMs` long (the shared L unless a workload, like the wide fan-out, sets its own).
 */
export async function floorFanout(pool, { n, p, cpuMs, latencyMs = L }) {
  await sleep(latencyMs);
  await limited(n, p, async () => {
    for (let k = 0; k < K; k++) {
      await sleep(latencyMs);
      if (cpuMs > 0) await pool.burn(cpuMs);
    }
  });
  await sleep(latencyMs);
}
