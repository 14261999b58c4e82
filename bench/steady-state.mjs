// Steady state of the latency-only fan-out N=256 P=64 (not a SPEC row; it explains the fan-out table).
// The table's "warm" runtimes have run the same fan-out before, but a pool thread is its own V8
// isolate: each JIT-compiles the driver separately, and TurboFan was measured still recompiling hot
// driver functions (several hundred ms of background CPU per 256-child fan-out) until ~2,500 children
// had run on the runtime. Here each system runs the fan-out `warmRuns` times untimed, then `reps` timed.
import { L, THREADS, parentTurns, childTurns } from './lib/schedule.mjs';
import { makeBrood, noopTool, installDelegation, timedRun } from './lib/brood.mjs';
import { burnerPool, floorFanout } from './floor.mjs';
import { median, round } from './lib/stats.mjs';

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

async function timed(warmRuns, reps, once) {
  for (let i = 0; i < warmRuns; i++) await once();
  const samples = [];
  for (let i = 0; i < reps; i++) samples.push(await once());
  return round(median(samples), 1);
}

export async function runSteadyState({ quick, log }) {
  const warmRuns = quick ? 3 : 10;
  const reps = 3;
  const out = { n: N, p: P, warmRuns, reps };
  const pool = burnerPool(THREADS);
  try {
    out.floorMs = await timed(warmRuns, reps, async () => {
      const t0 = performance.now();
      await floorFanout(pool, { n: N, p: P, cpuMs: 0 });
      return performance.now() - t0;
    });
  } finally {
    await pool.close();
  }
  for (const runner of ['worker', 'inline']) {
    const brood = makeBrood({ runner, scripts: scripts(), maxParallelToolCalls: P, threads: THREADS });
    brood.tools.register(noopTool());
    installDelegation(brood);
    try {
      out[`${runner}Ms`] = await timed(warmRuns, reps, () =>
        timedRun(brood, 'steady-root', 'steady-state fan-out', 120_000),
      );
    } finally {
      await brood.close();
    }
  }
  out.workerOverFloor = round(out.workerMs / out.floorMs, 3);
  out.inlineOverFloor = round(out.inlineMs / out.floorMs, 3);
  log(
    `steady state N=${N} P=${P} (after ${warmRuns} runs): floor ${out.floorMs} worker ${out.workerMs} (${out.workerOverFloor}×) inline ${out.inlineMs} (${out.inlineOverFloor}×)`,
  );
  return out;
}
