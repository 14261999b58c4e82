// Measurement helpers shared by every workload: percentiles, parent event-loop delay, RSS sampling.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * CPU ms used so far by what a /proc stat file describes (`/proc/<pid>/stat`: a whole process, all its
 * threads; `/proc/self/task/<tid>/stat`: one thread), utime + stime in 10 ms clock ticks. NaN off Linux.
 */
export function procCpuMs(statFile) {
  try {
    const fields = readFileSync(statFile, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** Nearest-rank percentile of an unsorted sample (p in 0..100). */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function summarize(values) {
  const mean = values.reduce((s, v) => s + v, 0) / (values.length || 1);
  return {
    n: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    mean,
    max: percentile(values, 100),
  };
}

export const median = (values) => percentile(values, 50);
export const round = (v, digits = 2) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : null);

/** Full GC twice (finalizers can free more on the second pass); a no-op without --expose-gc. */
export function gc() {
  if (typeof globalThis.gc !== 'function') return false;
  globalThis.gc();
  globalThis.gc();
  return true;
}

/**
 * Event-loop delay of the thread that calls it (the parent). Resolution 1 ms is the finest the
 * histogram supports reliably; values are reported in ms.
 */
export function loopDelay() {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  return () => {
    h.disable();
    // A run shorter than one resolution tick has no samples; report 0 rather than the sentinel.
    const ms = (ns) => (h.count === 0 ? 0 : ns / 1e6);
    return { p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) };
  };
}

/**
 * RSS growth against the workload's own baseline: the baseline is taken (after GC) when sampling
 * starts, so workloads run earlier in the process do not inflate later numbers.
 */
export function rssSampler(intervalMs = 25) {
  gc();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    const end = process.memoryUsage.rss();
    peak = Math.max(peak, end);
    const mb = (b) => b / (1024 * 1024);
    return { baselineMb: mb(baseline), peakGrowthMb: mb(peak - baseline), endGrowthMb: mb(end - baseline) };
  };
}

/**
 * Runs `fn` with loop-delay instrumentation only: no forced GC first. A full GC right before a run
 * made the next fan-out ~15 % slower on both brood runners (V8's state after a forced collection, with
 * or without sessions retained in memory), which no host does before each fan-out; the floor, which
 * allocates almost nothing, did not pay it. Timed repetitions use this.
 */
export async function timed(fn) {
  const stopLoop = loopDelay();
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  return { value, ms, loop: stopLoop() };
}

/** Runs `fn` with loop-delay and RSS instrumentation around it (RSS needs a GC'd baseline first). */
export async function instrumented(fn) {
  const stopRss = rssSampler();
  const run = await timed(fn);
  return { ...run, rss: stopRss() };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
