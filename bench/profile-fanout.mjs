// Profiling harness (not part of `npm run bench`): repeated latency-only fan-outs on one warm runtime,
// meant to run under `node --cpu-prof` so both the parent and the pool threads are profiled. It prints
// the CPU per child of the timed runs by thread group (main / the runtime's pool / V8's compiler and GC
// helpers); run it under V8 flags to attribute the helpers' share, e.g. `--no-concurrent-recompilation`
// moves TurboFan's compiles onto the isolates' own threads.
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile-fanout.mjs [worker|inline] [N] [P] [reps] [cpuMs] [latencyMs] [warmN]
// (the wide fan-out's row: `worker 10000 10000 1 0 1000`); bench/profile-top.mjs summarises the profiles.
// The warm-up is one run of the same fan-out, or, given warmN, a fan-out of warmN children at 20 ms
// (the bench's wide fan-out warms up with `64`, which leaves the pool threads' JIT in the timed run).
// For the C++ side (V8's compiler and collectors, which --cpu-prof does not see), run it under
// `perf record -k CLOCK_MONOTONIC` with BENCH_PERF_GROUPS=<file>: it writes the thread groups and the
// timed runs' window there, and bench/perf-threads.mjs splits `perf script`'s samples by them.

import { writeFileSync } from 'node:fs';
import { installDelegation, makeBrood, noopTool, ROUTE } from './lib/brood.mjs';
import { childTurns, L, parentTurns } from './lib/schedule.mjs';
import { cpuPerChild, threadCpu, threadGroups } from './lib/thread-cpu.mjs';

const [runner = 'worker', n = '256', p = '64', reps = '4', cpu = '0', latency = String(L), warmN] =
  process.argv.slice(2);
const N = Number(n);
const cpuMs = Number(cpu);
const WARM_L = 20;
const root = (match, children, latencyMs, childPrompt) => ({
  match,
  latencyMs,
  turns: parentTurns(children, 'subagent', (i) => ({ description: `child ${i}`, prompt: `${childPrompt}#${i}` })),
});
const scripts = [
  root('root', N, Number(latency), 'child-task '),
  { match: 'child-task ', latencyMs: Number(latency), cpuMs, turns: childTurns },
  ...(warmN === undefined
    ? []
    : [
        root('warm-up', Number(warmN), WARM_L, 'warm-task '),
        { match: 'warm-task ', latencyMs: WARM_L, cpuMs, turns: childTurns },
      ]),
];
const baseline = threadCpu(); // before the runtime: its pool threads count as `started`
const brood = makeBrood({ runner, scripts, maxParallelToolCalls: Number(p), threads: 2 });
brood.tools.register(noopTool());
installDelegation(brood);
const once = async (prompt = 'root') => {
  const agent = await brood.createAgent({ model: ROUTE });
  const t0 = performance.now();
  const result = await agent.run(prompt);
  const ms = performance.now() - t0;
  await agent.dispose();
  if (result.stopReason !== 'completed') throw new Error(result.diagnostic);
  return ms;
};
console.log('warm-up', (await once(warmN === undefined ? 'root' : 'warm-up')).toFixed(1));
const times = [];
const from = threadCpu();
const windowFrom = monotonicSeconds();
for (let i = 0; i < Number(reps); i++) times.push((await once()).toFixed(1));
const used = cpuPerChild(baseline, from, N * Number(reps));
if (process.env.BENCH_PERF_GROUPS) {
  const groups = threadGroups(baseline, threadCpu());
  const window = [windowFrom, monotonicSeconds()];
  writeFileSync(process.env.BENCH_PERF_GROUPS, JSON.stringify({ runner, children: N * Number(reps), window, groups }));
}
console.log(
  runner,
  `N=${N} P=${p} C=${cpuMs} L=${latency}`,
  times.join(' '),
  `| CPU ms/child: main ${used.main}, pool ${used.started}, V8 helpers ${used.background}`,
);
await brood.close();

/** CLOCK_MONOTONIC in seconds: the clock `perf record -k CLOCK_MONOTONIC` stamps its samples with. */
function monotonicSeconds() {
  return Number(process.hrtime.bigint()) / 1e9;
}
