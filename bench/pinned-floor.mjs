// Profiling harness (not part of `npm run bench`): the CPU fan-out's structure with no brood code.
// Each child is pinned to the least-loaded of 2 worker threads and runs there: K requests of
// (L ms timer in its thread, C ms burn), a tool round trip to the main thread between requests,
// then an end message; run interleaved with the calibrated floor (burns on whichever thread is free).
// It measures what pinning drivers to threads costs by itself (the README's CPU fan-out notes):
//   node bench/pinned-floor.mjs              replies taken right after each burn, end at once
//   node bench/pinned-floor.mjs endturn      one more round trip before the end (brood's endTurn)
//   node bench/pinned-floor.mjs endturn-early the same, the parent freeing the child at that round trip
import { Worker } from 'node:worker_threads';
import { burnerPool, floorFanout, limited } from './floor.mjs';
import { K, L } from './lib/schedule.mjs';
import { median, sleep, timed } from './lib/stats.mjs';

const mode = process.argv[2] ?? 'plain';
const DRIVERS = `
const { parentPort, receiveMessageOnPort } = require('node:worker_threads');
const waiting = new Map();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const burn = (ms) => { const end = performance.now() + ms; while (performance.now() < end) {} };
const ask = (id, t) => new Promise((resolve) => { waiting.set(id, resolve); parentPort.postMessage({ t, id }); });
const handle = (m) => {
  if (m.t === 'start') void child(m);
  else { waiting.get(m.id)(); waiting.delete(m.id); }
};
// What brood's link does after a long synchronous stretch: take the replies that arrived meanwhile.
const pump = () => { let m; while ((m = receiveMessageOnPort(parentPort))) handle(m.message); };
async function child({ id, K, L, C, endTurn }) {
  for (let k = 0; k < K; k++) {
    await sleep(L);
    burn(C);
    pump();
    if (k < K - 1) await ask(id, 'tool');
  }
  if (endTurn) await ask(id, endTurn);
  parentPort.postMessage({ t: 'end', id });
}
parentPort.on('message', handle);`;

function pinnedPool(threads = 2) {
  const done = new Map();
  const load = new Array(threads).fill(0);
  const finish = (i, id) => {
    if (!done.has(id)) return;
    load[i]--;
    done.get(id)();
    done.delete(id);
  };
  const workers = Array.from({ length: threads }, (_, i) => {
    const worker = new Worker(DRIVERS, { eval: true });
    worker.on('message', (m) => {
      if (m.t === 'end') return finish(i, m.id);
      worker.postMessage({ t: 'reply', id: m.id });
      if (m.t === 'early') finish(i, m.id);
    });
    return worker;
  });
  let nextId = 0;
  return {
    run(cpuMs) {
      let best = 0;
      for (let i = 1; i < threads; i++) if (load[i] < load[best]) best = i;
      load[best]++;
      const id = nextId++;
      const endTurn = mode === 'endturn' ? 'tool' : mode === 'endturn-early' ? 'early' : undefined;
      return new Promise((resolve) => {
        done.set(id, resolve);
        workers[best].postMessage({ t: 'start', id, K, L, C: cpuMs, endTurn });
      });
    },
    close: () => Promise.all(workers.map((w) => w.terminate())),
  };
}

async function pinnedFanout(pool, { n, p, cpuMs }) {
  await sleep(L);
  await limited(n, p, () => pool.run(cpuMs));
  await sleep(L);
}

const burner = burnerPool(2);
const pinned = pinnedPool(2);
for (const [n, p, cpuMs] of [
  [64, 8, 10],
  [256, 8, 10],
  [256, 64, 10],
]) {
  const config = { n, p, cpuMs };
  await timed(() => floorFanout(burner, config));
  await timed(() => pinnedFanout(pinned, config));
  const floor = [];
  const pinnedMs = [];
  for (let r = 0; r < 3; r++) {
    floor.push((await timed(() => floorFanout(burner, config))).ms);
    pinnedMs.push((await timed(() => pinnedFanout(pinned, config))).ms);
  }
  const [f, q] = [median(floor), median(pinnedMs)];
  console.log(
    `${mode} N=${n} P=${p} C=${cpuMs}: floor ${f.toFixed(0)} ms, pinned ${q.toFixed(0)} ms = ${(q / f).toFixed(3)}×`,
  );
}
await burner.close();
await pinned.close();
