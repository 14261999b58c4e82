// Steady state of the latency-only fan-out N=256 P=64 (not a SPEC row; it explains the fan-out table).
// The table's "warm" runtimes have run the same fan-out before, but a pool thread is its own V8
// isolate: each JIT-compiles the driver separately, and TurboFan was measured still recompiling hot
// driver functions (several hundred ms of background CPU per 256-child fan-out) until ~2,500 children
// had run on the runtime. Here each system runs the fan-out `warmRuns` times untimed, then `reps` timed.

import { burnerPool, floorFanout } from './floor.mjs';
import { installDelegation, makeBrood, noopTool, timedRun } from './lib/brood.mjs';
import { childTurns, L, parentTurns, THREADS } from './lib/schedule.mjs';
import { median, round } from './lib/stats.mjs';
import { cpuPerChild, threadCpu } from './lib/thread-cpu.mjs';

const N = 256;
const P = 64;

function scripts() {
  return [
    {
      match: 'steady-root',
      latencyMs: L,
      turns: parentTurns(N, 'subagent', (i) => ({ description: `child ${i}`, prompt: `steady-child #${i}` })),
    },
    { match: 'steady-child ', latencyMs: L, turns: childTurns },
  ];
}

/** Median of `reps` timed runs after `warmRuns` untimed ones, and the CPU the timed runs used per child. */
async function timed(warmRuns, reps, once, baseline = threadCpu()) {
  for (let i = 0; i < warmRuns; i++) await once();
  const samples = [];
  const from = threadCpu();
  for (let i = 0; i < reps; i++) samples.push(await once());
  return { ms: round(median(samples), 1), cpuMsPerChild: cpuPerChild(baseline, from, reps * N) };
}

export async function runSteadyState({ quick, log }) {
  const warmRuns = quick ? 3 : 10;
  const reps = 3;
  const out = { n: N, p: P, warmRuns, reps };
  const pool = burnerPool(THREADS);
  try {
    const floor = await timed(warmRuns, reps, async () => {
      const t0 = performance.now();
      await floorFanout(pool, { n: N, p: P, cpuMs: 0 });
      return performance.now() - t0;
    });
    out.floorMs = floor.ms;
  } finally {
    await pool.close();
  }
  // CPU per child of the timed runs (/proc, 10 ms ticks): the main thread, the threads the runtime
  // started (its pool) and the threads that were there before it (V8's compiler and GC helpers).
  out.cpuMsPerChild = {};
  for (const runner of ['worker', 'inline']) {
    const baseline = threadCpu();
    const brood = makeBrood({ runner, scripts: scripts(), maxParallelToolCalls: P, threads: THREADS });
    brood.tools.register(noopTool());
    installDelegation(brood);
    try {
      const run = await timed(
        warmRuns,
        reps,
        () => timedRun(brood, 'steady-root', 'steady-state fan-out', 120_000),
        baseline,
      );
      out[`${runner}Ms`] = run.ms;
      out.cpuMsPerChild[runner] = run.cpuMsPerChild;
    } finally {
      await brood.close();
    }
  }
  out.workerOverFloor = round(out.workerMs / out.floorMs, 3);
  out.inlineOverFloor = round(out.inlineMs / out.floorMs, 3);
  log(
    `steady state N=${N} P=${P} (after ${warmRuns} runs): floor ${out.floorMs} worker ${out.workerMs} (${out.workerOverFloor}×) inline ${out.inlineMs} (${out.inlineOverFloor}×); CPU ms/child main/pool/background worker ${Object.values(out.cpuMsPerChild.worker).join('/')} inline ${Object.values(out.cpuMsPerChild.inline).join('/')}`,
  );
  return out;
}
