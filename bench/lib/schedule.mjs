// The one definition of the fan-out workload, shared by brood, the calibrated floor and the peer,
// so all systems replay exactly the same turns.
import { availableParallelism } from 'node:os';

export const L = 20; // ms of model latency per request
export const K = 3; // requests per child: two tool steps, then the answer
export const CHILD_CPU = 10; // ms of CPU per child request in the CPU case

/** Threads given to brood's pool and the floor's burner pool: one per core, like brood's default. */
export const THREADS = Math.max(1, availableParallelism());

export function fanoutConfigs(quick) {
  const ns = quick ? [16, 64] : [16, 64, 256];
  const configs = [];
  for (const cpuMs of [0, CHILD_CPU]) for (const p of [8, 64]) for (const n of ns) configs.push({ n, p, cpuMs });
  return configs;
}

/** SPEC §12 ideal: 2L + max(⌈N/P⌉·K·(L+C), N·K·C / cores). */
export function idealMs({ n, p, cpuMs }, cores = THREADS) {
  return 2 * L + Math.max(Math.ceil(n / p) * K * (L + cpuMs), (n * K * cpuMs) / cores);
}

/** Parent: one assistant message with N delegation calls, then the answer. */
export function parentTurns(n, toolName, argsOf) {
  const calls = Array.from({ length: n }, (_, i) => ({ name: toolName, arguments: argsOf(i) }));
  return [{ toolCalls: calls }, { text: 'all children finished' }];
}

/** Child: K = 3 requests in one turn — two steps calling a trivial concurrency-safe tool, then the answer. */
export const childTurns = [
  { toolCalls: [{ name: 'noop', arguments: {} }] },
  { toolCalls: [{ name: 'noop', arguments: {} }] },
  { text: 'child done' },
];

/** Busy-loop for `ms`, the same way brood's scripted model burns CPU (SPEC §8). */
export function burnCpu(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* burn */
  }
}
