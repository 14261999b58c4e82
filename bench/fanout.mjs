// SPEC §12 fan-out: N sibling children in one assistant message, P = maxParallelToolCalls, each
// child K = 3 requests at L = 20 ms (+ C = 10 ms CPU in the CPU case). Systems are interleaved per
// configuration (floor, worker, inline, peer back to back) so background load on the machine hits
// them alike and the ratios stay meaningful.

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { burnerPool, floorFanout } from './floor.mjs';
import { installDelegation, makeBrood, noopTool, timedRun } from './lib/brood.mjs';
import { attempt, withDeadline } from './lib/run-guard.mjs';
import { CHILD_CPU, childTurns, fanoutConfigs, idealMs, L, parentTurns, THREADS } from './lib/schedule.mjs';
import { instrumented, median, round, timed } from './lib/stats.mjs';
import { cpuPerChild, threadCpu } from './lib/thread-cpu.mjs';
import { peerFanout } from './peer.mjs';

const rootPrompt = (n, cpuMs) => `fanout-root n=${n} c=${cpuMs};`;

function fanoutScripts(ns) {
  const scripts = [];
  for (const n of ns)
    for (const cpuMs of [0, CHILD_CPU])
      scripts.push({
        match: rootPrompt(n, cpuMs),
        latencyMs: L, // the parent's own two requests carry latency but never CPU
        turns: parentTurns(n, 'subagent', (i) => ({
          description: `child ${i}`,
          prompt: `child-task c=${cpuMs} #${i}`,
        })),
      });
  for (const cpuMs of [0, CHILD_CPU])
    scripts.push({ match: `child-task c=${cpuMs} `, latencyMs: L, cpuMs, turns: childTurns });
  return scripts;
}

/** One brood fan-out on a fresh top-level agent. */
function broodFanout(brood, { n, cpuMs }) {
  return timedRun(brood, rootPrompt(n, cpuMs), `fan-out n=${n}`);
}

/**
 * One configuration on one system. The first run is this configuration's first on the runtime: it is
 * not timed ("warm" is the same fan-out run again on the same runtime) and it takes the RSS growth,
 * whose baseline needs a forced GC. The `reps` timed runs follow without one (see stats.timed); the
 * median-makespan repetition gives the loop delay. `cpuMsPerChild` is the CPU of the timed runs per child
 * by thread group (bench/lib/thread-cpu.mjs; `baseline` was taken before any runtime or pool existed, so
 * `background` is V8's compiler and GC helpers and libuv's pool, `started` every thread a system started).
 */
async function measure(reps, n, baseline, run) {
  const first = await instrumented(run);
  const samples = [];
  const from = threadCpu();
  for (let i = 0; i < reps; i++) samples.push(await timed(run));
  const cpuMsPerChild = cpuPerChild(baseline, from, reps * n);
  const mid = median(samples.map((s) => s.ms));
  const pick = samples.find((s) => s.ms === mid);
  return {
    makespanMs: round(mid, 1),
    samplesMs: samples.map((s) => round(s.ms, 1)),
    firstRunMs: round(first.ms, 1),
    loopDelayP50Ms: round(pick.loop.p50Ms),
    loopDelayP99Ms: round(pick.loop.p99Ms),
    rssGrowthMb: round(first.rss.peakGrowthMb, 1),
    cpuMsPerChild,
  };
}

export async function runFanout({ quick, peer, log }) {
  const configs = fanoutConfigs(quick);
  const ns = [...new Set(configs.map((c) => c.n))];
  const scripts = fanoutScripts(ns);
  const baseline = threadCpu();
  const broods = {};
  let delegation;
  // Warm-up: thread start, module compilation and JIT are start-up costs, not fan-out costs. Each
  // runtime is created right before its first run, which is kept as its cold-start figure: its pool
  // boots alone (no other runtime's threads booting beside it), overlapped with that run's setup.
  // Inline runtimes go first, so process-wide costs (the parent's module compilation and JIT) land
  // on inline/8 and the worker figures show what a fresh runtime's pool costs.
  const coldMs = {};
  const coldNoCacheMs = {};
  const cold = async (runner, p) => {
    const t0 = performance.now();
    const brood = makeBrood({ runner, scripts, maxParallelToolCalls: p, threads: THREADS });
    brood.tools.register(noopTool());
    delegation = installDelegation(brood);
    await broodFanout(brood, { n: 16, cpuMs: 0 });
    return { brood, ms: round(performance.now() - t0, 1) };
  };
  const cacheDir = freshCodeCacheDir();
  for (const runner of ['inline', 'worker'])
    for (const p of [8, 64]) {
      const key = `${runner}/${p}`;
      if (runner === 'worker' && p === 8) coldNoCacheMs[key] = await firstRunOnThisMachine(cold, cacheDir, p);
      const { brood, ms } = await cold(runner, p);
      broods[key] = brood;
      coldMs[key] = ms;
      if (!quick) await broodFanout(brood, { n: 16, cpuMs: CHILD_CPU });
    }
  log(
    `cold first fan-out (N=16, C=0): ${JSON.stringify(coldMs)}; worker/8 without a code cache ${coldNoCacheMs['worker/8']} ms`,
  );
  const pool = burnerPool(THREADS);
  await floorFanout(pool, { n: 16, p: 8, cpuMs: CHILD_CPU });
  if (peer.available) await peerFanout({ n: 16, p: 8, cpuMs: CHILD_CPU });

  const rows = [];
  for (const config of configs) {
    const { n, p, cpuMs } = config;
    const reps = quick ? 1 : n >= 256 ? 2 : 3;
    const row = { n, p, cpuMs, idealMs: idealMs(config) };
    row.floor = await attempt(() => measure(reps, n, baseline, () => floorFanout(pool, config)));
    row.worker = await attempt(() => measure(reps, n, baseline, () => broodFanout(broods[`worker/${p}`], config)));
    row.inline = await attempt(() => measure(reps, n, baseline, () => broodFanout(broods[`inline/${p}`], config)));
    row.peer = peer.available
      ? await attempt(() => measure(reps, n, baseline, () => withDeadline(peerFanout(config), 180_000, 'peer fan-out')))
      : { error: peer.reason };
    log(
      `fanout N=${n} P=${p} C=${cpuMs}: ideal ${row.idealMs} floor ${row.floor.makespanMs ?? row.floor.error} worker ${row.worker.makespanMs ?? row.worker.error} inline ${row.inline.makespanMs ?? row.inline.error} peer ${row.peer.makespanMs ?? row.peer.error}`,
    );
    rows.push(row);
  }
  await pool.close();
  await Promise.all(Object.values(broods).map((b) => b.close()));
  return {
    threads: THREADS,
    delegation,
    L,
    K: 3,
    C: CHILD_CPU,
    coldFirstRunMs: coldMs,
    coldFirstRunNoCacheMs: coldNoCacheMs,
    rows,
  };
}

/**
 * The bench's own empty code-cache directory (BROOD_CODE_CACHE, read by pool threads when they start),
 * so "first run on this machine" and "with the cache" are both measured rather than inherited from
 * whatever ran before.
 */
function freshCodeCacheDir() {
  const dir = mkdtempSync(join(tmpdir(), 'brood-bench-code-cache-'));
  process.env.BROOD_CODE_CACHE = dir;
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A worker runtime's first fan-out with an empty code cache (what the very first run after
 * installing or upgrading brood pays); its threads then write the cache, and the runtimes measured
 * after it boot from it, as every later run on the machine does.
 */
async function firstRunOnThisMachine(cold, cacheDir, p) {
  const { brood, ms } = await cold('worker', p);
  const deadline = performance.now() + 10_000;
  while (readdirSync(cacheDir).filter((name) => name.endsWith('.cache')).length === 0) {
    if (performance.now() > deadline) throw new Error('pool threads wrote no code cache within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await brood.close();
  return ms;
}
