// What the ≤ 1.05× latency-only target leaves the parent (not a SPEC row; it explains the fan-out
// table). The latency-only N=256 P=64 schedule of the calibrated floor, run with m ms of synchronous
// work per child on the main thread and nothing else — no threads, no crossings, no driver — split
// over the points where a parent handles a child: its start, its two tool steps and its end. The
// bare floor runs interleaved with every m. Whatever the parent does per child (sessions, tool
// dispatch, delegation setup, its end of the wire), the main thread is single, so this curve is a
// lower bound on the makespan of any runner whose parent spends m ms per child.

import { limited } from './floor.mjs';
import { burnCpu, K, L } from './lib/schedule.mjs';
import { median, round, sleep } from './lib/stats.mjs';

const N = 256;
const P = 64;
/** Shares of a child's parent-side work at its start, each tool step (K − 1 of them) and its end. */
const SHARE = { start: 0.4, step: 0.15, end: 0.3 };

async function fanout(mainMsPerChild) {
  const t0 = performance.now();
  await sleep(L);
  await limited(N, P, async () => {
    if (mainMsPerChild > 0) burnCpu(mainMsPerChild * SHARE.start);
    for (let k = 0; k < K; k++) {
      await sleep(L);
      if (mainMsPerChild <= 0) continue;
      burnCpu(mainMsPerChild * (k < K - 1 ? SHARE.step : SHARE.end));
    }
  });
  await sleep(L);
  return performance.now() - t0;
}

/** The largest m whose ratio stays within `limit`, by linear interpolation between measured points. */
function allowance(rows, limit) {
  let best = 0;
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1], rows[i]];
    if (b.overFloor <= limit) best = b.mainMsPerChild;
    else {
      if (a.overFloor <= limit)
        best =
          a.mainMsPerChild +
          ((limit - a.overFloor) / (b.overFloor - a.overFloor)) * (b.mainMsPerChild - a.mainMsPerChild);
      break;
    }
  }
  return round(best, 3);
}

export async function runBudget({ quick, log }) {
  const steps = [0.1, 0.2, 0.3, 0.4, 0.6];
  const reps = quick ? 3 : 5;
  for (const m of [0, ...steps]) await fanout(m); // warm-up: timers, the burn loop's JIT
  const rows = [];
  for (const m of steps) {
    const bare = [];
    const loaded = [];
    for (let r = 0; r < reps; r++) {
      bare.push(await fanout(0));
      loaded.push(await fanout(m));
    }
    const floorMs = median(bare);
    const makespanMs = median(loaded);
    rows.push({
      mainMsPerChild: m,
      floorMs: round(floorMs, 1),
      makespanMs: round(makespanMs, 1),
      overFloor: round(makespanMs / floorMs, 3),
    });
  }
  const out = {
    n: N,
    p: P,
    L,
    share: SHARE,
    reps,
    rows,
    allowedMainMsPerChildAt105: allowance([{ mainMsPerChild: 0, overFloor: 1 }, ...rows], 1.05),
  };
  log(
    `budget N=${N} P=${P}: ${rows.map((r) => `${r.mainMsPerChild} ms/child → ${r.overFloor}×`).join(', ')}; ≤ 1.05× allows ${out.allowedMainMsPerChildAt105} ms/child`,
  );
  return out;
}
