// SPEC §12 parked continuables: start many continuable children, let each finish its first turn and
// go idle (an idle continuable child holds no worker capacity), then read RSS after GC; then send a
// followup to a sample of them, one at a time, and time each from `followup()` to that child's
// first `model/request` reaching the parent's store.
//
// The children are started from inside a tool the parent is running, with the parent's turn still
// open: each child's settlement notice then queues in the parent's inbox instead of waking it for
// thousands of turns, which would measure the parent's history, not parked children.

import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';
import { limited } from './floor.mjs';
import { makeBrood, noopTool, ROUTE, stampedSessions } from './lib/brood.mjs';
import { collectPoolThreads } from './lib/pool-threads.mjs';
import { withDeadline } from './lib/run-guard.mjs';
import { THREADS } from './lib/schedule.mjs';
import { gc, percentile, round, sleep, summarize } from './lib/stats.mjs';

const mem = () => {
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return { rss, heap: heapUsed, heapTotal, external, arrayBuffers };
};

/** Parking 100,000 takes ~85 s on 2 shared cores (most of it GC); `--children` sets any count standalone. */
export const PARKED_FULL = 100_000;
const FOLLOWUP_WARMUP = 20;

/**
 * Wakes the one waiting followup when a stamp or a turn end arrives. Waiting on it, rather than
 * polling with setImmediate, keeps the bench from allocating on the main thread while a followup
 * runs: the polling's promises were part of what filled the young generation the followups'
 * outliers waited on to be collected.
 */
const progress = {
  waiter: undefined,
  notify() {
    const waiter = progress.waiter;
    progress.waiter = undefined;
    waiter?.();
  },
  next: () => new Promise((resolve) => (progress.waiter = resolve)),
};

/** Session id → performance.now() of its latest `model/request`, as the parent's store receives it. */
function requestStamps() {
  const latest = new Map();
  const sessions = stampedSessions((id, events, now) => {
    if (events.some((e) => e.type === 'model/request')) {
      latest.set(id, now);
      progress.notify();
    }
  });
  return { sessions, latest };
}

export async function runParkedContinuables({ quick, log, children }) {
  const count = children ?? (quick ? 500 : PARKED_FULL);
  const warmCount = quick ? 500 : 2500;
  // Enough samples that the p99 is a rank inside the sample, not its maximum (200 made it the 2nd highest).
  const followups = quick ? 100 : 1000;
  const stamps = requestStamps();
  const brood = makeBrood({
    runner: 'worker',
    threads: THREADS,
    sessions: stamps.sessions,
    scripts: [
      { match: 'park-all', turns: [{ toolCalls: [{ name: 'park', arguments: {} }] }, { text: 'done' }] },
      { match: 'parked-child', turns: [{ text: 'parked' }, { text: 'followed up' }] },
    ],
  });
  const ended = new Set();
  const turnsEnded = new Map();
  brood.subagents.on('end', (e) => {
    ended.add(e.id);
    turnsEnded.set(e.id, (turnsEnded.get(e.id) ?? 0) + 1);
    progress.notify();
  });
  let report;
  const measured = new Promise((resolve) => (report = resolve));
  brood.tools.register(
    noopTool({
      name: 'park',
      execute: async (_args, ctx) => {
        const signal = new AbortController().signal;
        const parkedIds = [];
        const park = async (n, from) => {
          const ids = [];
          await limited(n, 32, async (i) => {
            const request = { parent: ctx.agent, prompt: `parked-child ${from + i}` };
            ids.push(
              (
                await brood.subagents.startContinuable({
                  provider: 'spawn',
                  label: `parked ${from + i}`,
                  request,
                  signal,
                })
              ).childId,
            );
          });
          while (ids.some((id) => !ended.has(id))) await sleep(20); // every child has finished its turn and parked
          parkedIds.push(...ids);
        };
        // The baseline is a warm runtime with children already parked, so the figure is what one more
        // parked child costs. Measured: the first ~2,500 activations also grow each pool thread's V8 heap
        // from ~17 to ~42 MB (its young generation reaching full size; the live heap stays ~7.7 MB), a
        // one-time cost reported as warmupRssGrowthMb, after which RSS grows linearly per parked child.
        // Every isolate collects before RSS is read: a pool thread's old generation otherwise still holds
        // the garbage of the activations that parked the children (measured at 100,000: ~700 MB in one
        // thread, against ~7 MB live), which the figure would charge to the parked children. The pool
        // threads collect through the inspector (bench/lib/pool-threads.mjs), which leaves nothing in them.
        const settle = async () => {
          gc();
          await sleep(200);
          gc();
          const mainOnly = mem();
          await collectPoolThreads();
          await sleep(200);
          return { ...mem(), mainOnlyRss: mainOnly.rss };
        };
        // BENCH_PARKED_HEAP=<prefix>: heap snapshots around the measured parking, for bench/heap-diff.mjs
        // (the main thread's, and each pool thread's as <prefix><before|after>-w<n>).
        const heapPrefix = process.env.BENCH_PARKED_HEAP;
        const snapshots = async (name) => {
          if (!heapPrefix) return;
          writeHeapSnapshot(`${heapPrefix}${name}.heapsnapshot`);
          await collectPoolThreads(`${heapPrefix}${name}`);
        };
        const start = await settle();
        await park(warmCount, 0);
        const before = await settle();
        await snapshots('before');
        const t0 = performance.now();
        await park(count, warmCount);
        const startMs = performance.now() - t0;
        const after = await settle();
        await snapshots('after');
        log(`parked ${count} continuable children in ${Math.round(startMs)} ms; timing followups`);
        const sampling = await sampleAllocations(process.env.BENCH_FOLLOWUP_ALLOCATIONS);
        const followup = await followupLatencies(brood, ctx.agent, parkedIds, followups, stamps.latest, turnsEnded);
        await sampling?.stop();
        report({ start, before, after, startMs, followup });
        return 'parked';
      },
    }),
  );
  const parent = await brood.createAgent({ model: ROUTE });
  void parent.run('park-all'); // the turn stays open inside `park` until close() cancels it
  const { start, before, after, startMs, followup } = await withDeadline(measured, 900_000, 'parking children');
  await brood.close();
  const kb = (b) => b / 1024;
  const out = {
    children: count,
    parkedBeforeBaseline: warmCount,
    warmupRssGrowthMb: round((before.rss - start.rss) / 1024 / 1024, 1),
    // What the figure was until the marginal method: growth over the first children, one-time costs included.
    firstRssPerChildKb: round(kb(before.rss - start.rss) / warmCount, 1),
    rssPerChildKb: round(kb(after.rss - before.rss) / count, 1),
    // The figure as it was taken before the pool threads were collected too (main-thread GC only).
    rssPerChildMainGcOnlyKb: round(kb(after.mainOnlyRss - before.mainOnlyRss) / count, 1),
    heapPerChildKb: round(kb(after.heap - before.heap) / count, 1),
    // The main isolate's committed heap and memory outside any isolate's heap (array buffers' and
    // shared memory's backing stores) per parked child: with heapPerChildKb, where the RSS goes.
    heapCommittedPerChildKb: round(kb(after.heapTotal - before.heapTotal) / count, 1),
    externalPerChildKb: round(kb(after.external - before.external) / count, 2),
    rssGrowthMb: round((after.rss - before.rss) / 1024 / 1024, 1),
    startAllMs: round(startMs, 0),
    followup,
    gcExposed: typeof globalThis.gc === 'function',
  };
  log(
    `parked continuables: ${count} children, ${out.rssPerChildKb} KB RSS each (${out.heapPerChildKb} KB main heap), started+parked in ${out.startAllMs} ms; followup → start p50 ${followup.p50Ms} ms p99 ${followup.p99Ms} ms`,
  );
  return out;
}

/**
 * Followups to `samples` parked children spread over the whole population, one at a time: each is
 * timed from `followup()` to the child's next `model/request` reaching the store, then its turn is
 * let end so the next sample finds every other child parked. The first few are a warm-up. The main
 * thread's GC pauses are observed alongside, to tell how many of the slowest followups waited on one.
 * With BENCH_FOLLOWUP_WINDOWS=<file> the samples' [start, end] (hrtime µs, the clock `--cpu-prof`
 * profiles use) are written there, so a profile can be cut to the followups alone.
 */
async function followupLatencies(brood, parent, ids, samples, latestRequest, turnsEnded) {
  const signal = new AbortController().signal;
  const stride = Math.max(1, Math.floor(ids.length / (samples + FOLLOWUP_WARMUP)));
  const pauses = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push([e.startTime, e.startTime + e.duration, e.detail?.kind]);
  });
  observer.observe({ entryTypes: ['gc'] });
  const timed = [];
  const windows = [];
  const hrUs = () => Number(process.hrtime.bigint() / 1000n);
  for (let i = 0; i < samples + FOLLOWUP_WARMUP && i * stride < ids.length; i++) {
    const id = ids[i * stride];
    const seenBefore = latestRequest.get(id);
    const endedBefore = turnsEnded.get(id) ?? 0;
    const h0 = hrUs();
    const t0 = performance.now();
    await brood.subagents.followup(parent, id, `followup ${i}`, { signal });
    let late = false;
    const deadline = setTimeout(() => {
      late = true;
      progress.notify();
    }, 10_000);
    while (latestRequest.get(id) === seenBefore || (turnsEnded.get(id) ?? 0) === endedBefore) {
      if (late) throw new Error(`followup to ${id} started no turn within 10 s`);
      await progress.next();
    }
    clearTimeout(deadline);
    if (i < FOLLOWUP_WARMUP) continue;
    const ms = latestRequest.get(id) - t0;
    timed.push({ t0, ms });
    windows.push([h0, h0 + Math.round(ms * 1000)]);
  }
  await sleep(50); // the observer's last entries
  observer.disconnect();
  if (process.env.BENCH_FOLLOWUP_WINDOWS) writeFileSync(process.env.BENCH_FOLLOWUP_WINDOWS, JSON.stringify(windows));
  const s = summarize(timed.map((t) => t.ms));
  const slowest = [...timed].sort((a, b) => b.ms - a.ms).slice(0, Math.max(1, Math.ceil(timed.length / 100)));
  const overlapsGc = ({ t0, ms }) => pauses.some(([from, to]) => from < t0 + ms && to > t0);
  return {
    samples: timed.length,
    p50Ms: round(s.p50, 3),
    p90Ms: round(
      percentile(
        timed.map((t) => t.ms),
        90,
      ),
      3,
    ),
    p99Ms: round(s.p99, 3),
    maxMs: round(s.max, 3),
    // Of the slowest 1 %, how many overlapped a main-thread GC pause.
    slowestOverlappingGc: `${slowest.filter(overlapsGc).length}/${slowest.length}`,
    mainGcPauses: gcPauseSummary(pauses),
  };
}

/**
 * BENCH_FOLLOWUP_ALLOCATIONS=<file>: what the main thread allocates while the followups run, sampled
 * (collected objects included), as a .heapprofile for Chrome DevTools or a script.
 */
async function sampleAllocations(file) {
  if (!file) return undefined;
  const { Session } = await import('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, out) => (error ? reject(error) : resolve(out))),
    );
  await post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    async stop() {
      const { profile } = await post('HeapProfiler.stopSampling');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/** The main thread's GC pauses while followups ran, per kind (V8's constants: 1 minor, 2 major, 4 incremental, 8 weak callbacks). */
function gcPauseSummary(pauses) {
  const byKind = {};
  for (const [from, to, kind] of pauses) {
    const key = kind ?? '?';
    byKind[key] ??= { count: 0, totalMs: 0, maxMs: 0 };
    const k = byKind[key];
    k.count += 1;
    k.totalMs = round(k.totalMs + (to - from), 2);
    k.maxMs = round(Math.max(k.maxMs, to - from), 2);
  }
  return byKind;
}

// Standalone: `node --expose-gc bench/parked-continuables.mjs [--children N]` prints the figures as JSON.
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--children');
  const children = at >= 0 ? Number(args[at + 1]) : undefined;
  const t0 = performance.now();
  const log = (line) => console.error(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${line}`);
  console.log(JSON.stringify(await runParkedContinuables({ quick: false, log, children }), null, 2));
  process.exit(0);
}
