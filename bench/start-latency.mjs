// SPEC §12 start latency: subagents.start() → the child's first `model/request`, as the parent
// observes it (the timestamping store sees the append arrive). Children are started one at a time
// on a warm pool so each sample is latency, not queueing behind siblings.
import { makeBrood, ROUTE, stampedSessions } from './lib/brood.mjs';
import { withDeadline } from './lib/run-guard.mjs';
import { THREADS } from './lib/schedule.mjs';
import { round, summarize } from './lib/stats.mjs';

async function measureRunner(runner, count) {
  // Session id → time of its first model/request append. Recorded whether or not anyone waits yet:
  // with the inline runner the request could in principle land before start() resolves.
  const firstSeen = new Map();
  const waiters = new Map();
  const sessions = stampedSessions((id, events, now) => {
    if (firstSeen.has(id) || !events.some((e) => e.type === 'model/request')) return;
    firstSeen.set(id, now);
    waiters.get(id)?.(now);
  });
  const brood = makeBrood({
    runner,
    threads: THREADS,
    sessions,
    scripts: [{ match: 'start-child', turns: [{ text: 'hi' }] }],
  });
  const parent = await brood.createAgent({ model: ROUTE });
  const signal = new AbortController().signal;
  const warmup = Math.min(50, count / 4);
  const samples = [];
  for (let i = 0; i < warmup + count; i++) {
    const t0 = performance.now();
    const run = await brood.subagents.start('spawn', { parent, prompt: `start-child ${i}`, signal });
    // The run id is the child's session id; its first model/request can only come after start().
    const seen = firstSeen.has(run.id) ? firstSeen.get(run.id) : new Promise((resolve) => waiters.set(run.id, resolve));
    const t1 = await withDeadline(seen, 10_000, `child ${i} first request`);
    if (i >= warmup) samples.push(t1 - t0);
    await run.result;
    await run.dispose();
    firstSeen.delete(run.id);
    waiters.delete(run.id);
  }
  await brood.close();
  const s = summarize(samples);
  return {
    children: count,
    p50Ms: round(s.p50, 3),
    p99Ms: round(s.p99, 3),
    meanMs: round(s.mean, 3),
    maxMs: round(s.max, 3),
  };
}

export async function runStartLatency({ quick, log }) {
  const count = quick ? 200 : 1000;
  const out = {};
  for (const runner of ['worker', 'inline']) {
    out[runner] = await measureRunner(runner, count);
    log(`start latency ${runner}: p50 ${out[runner].p50Ms} ms p99 ${out[runner].p99Ms} ms`);
  }
  return out;
}
