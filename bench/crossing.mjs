// The machine's own thread-crossing floor, no brood code: a bare MessagePort echo between the main
// thread and one worker, after both sat idle for 0, 1 and 20 ms (20 ms = a model wait, L). brood's
// hops cannot be cheaper than this, so the tool-RPC and deep-tree rows are read against it.
// Also the sender's own cost of one postMessage to a thread that sleeps (waking it is a syscall; on
// a VM, an inter-processor interrupt).
import { MessageChannel, Worker } from 'node:worker_threads';
import { round, sleep, summarize } from './lib/stats.mjs';

const ECHO = `
const { parentPort } = require('node:worker_threads');
parentPort.once('message', (port) => {
  port.on('message', (m) => port.postMessage(m));
  parentPort.postMessage('ready');
});`;

async function echoWorker() {
  const worker = new Worker(ECHO, { eval: true });
  const { port1, port2 } = new MessageChannel();
  worker.postMessage(port2, [port2]);
  await new Promise((resolve) => worker.once('message', resolve));
  return { worker, port: port1 };
}

/** Round trips (µs) and the sender's postMessage time (µs), each after `idleMs` of both threads idle. */
async function roundTrips(port, idleMs, count) {
  const trips = [];
  const posts = [];
  for (let i = 0; i < count; i++) {
    if (idleMs > 0) await sleep(idleMs);
    const replied = new Promise((resolve) => port.once('message', resolve));
    const t0 = performance.now();
    port.postMessage(i);
    const posted = performance.now();
    await replied;
    trips.push((performance.now() - t0) * 1000);
    posts.push((posted - t0) * 1000);
  }
  return { trips: summarize(trips), posts: summarize(posts) };
}

export async function runCrossing({ quick, log }) {
  const { worker, port } = await echoWorker();
  try {
    await roundTrips(port, 0, 500); // warm both sides' message path
    const byIdleMs = {};
    for (const idleMs of [0, 1, 20]) {
      const count = idleMs === 20 ? (quick ? 60 : 200) : quick ? 300 : 1000;
      const { trips, posts } = await roundTrips(port, idleMs, count);
      byIdleMs[idleMs] = {
        count,
        roundTripP50Us: round(trips.p50, 1),
        roundTripP99Us: round(trips.p99, 1),
        postP50Us: round(posts.p50, 1),
      };
    }
    const text = Object.entries(byIdleMs)
      .map(
        ([idle, x]) =>
          `idle ${idle} ms: p50 ${x.roundTripP50Us} µs p99 ${x.roundTripP99Us} µs (post ${x.postP50Us} µs)`,
      )
      .join('; ');
    log(`bare MessagePort round trip, no brood code: ${text}`);
    return { byIdleMs };
  } finally {
    await worker.terminate();
  }
}
