// CPU per thread of this process from /proc (Linux; 10 ms clock ticks), grouped so a run's CPU can be
// split into the main thread, the threads a system started (brood's pool, the floor's burners) and
// the threads that were there before it (V8's compiler and GC helpers, libuv's pool).
import { readdirSync } from 'node:fs';
import { procCpuMs, round } from './stats.mjs';

/** tid → CPU ms used so far, for every thread of this process (empty off Linux). */
export function threadCpu() {
  const out = new Map();
  let tids = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    const ms = procCpuMs(`/proc/self/task/${tid}/stat`);
    if (Number.isFinite(ms)) out.set(tid, ms);
  }
  return out;
}

/**
 * CPU ms between two snapshots, split by thread group: `main`, `started` (threads absent from
 * `before`, the snapshot taken before the system under test was created) and `background`.
 */
function cpuSplit(baseline, from, to) {
  const split = { main: 0, started: 0, background: 0 };
  for (const [tid, ms] of to) split[groupOf(baseline, tid)] += ms - (from.get(tid) ?? 0);
  return split;
}

/** `main`, `started` or `background` (see cpuSplit) for one thread id. */
function groupOf(baseline, tid) {
  if (tid === String(process.pid)) return 'main';
  return baseline.has(tid) ? 'background' : 'started';
}

/** Thread id → group (see cpuSplit) for every thread in the snapshot `now`. */
export function threadGroups(baseline, now) {
  return Object.fromEntries([...now.keys()].map((tid) => [tid, groupOf(baseline, tid)]));
}

/**
 * CPU ms per child since the snapshot `from`, by thread group (see cpuSplit), over `children` children:
 * the `cpuMsPerChild` figure of the bench's results.
 */
export function cpuPerChild(baseline, from, children) {
  const used = cpuSplit(baseline, from, threadCpu());
  const perChild = (ms) => round(ms / children, 3);
  return { main: perChild(used.main), started: perChild(used.started), background: perChild(used.background) };
}
