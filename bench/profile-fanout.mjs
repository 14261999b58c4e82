// Profiling harness (not part of `npm run bench`): repeated latency-only fan-outs on one warm runtime,
// meant to run under `node --cpu-prof` so both the parent and the pool threads are profiled. It prints
// the CPU per child of the timed runs by thread group (main / the runtime's pool / V8's compiler and GC
// helpers); run it under V8 flags to attribute the helpers' share, e.g. `--no-concurrent-recompilation`
// moves TurboFan's compiles onto the isolates' own threads.
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile-fanout.mjs [worker|inline] [N] [P] [reps] [cpuMs] [latencyMs]
// (the wide fan-out's row: `worker 10000 10000 1 0 1000`); bench/profile-top.mjs summarises the profiles.

import { installDelegation, makeBrood, noopTool, ROUTE } from './lib/brood.mjs';
import { childTurns, L, parentTurns } from './lib/schedule.mjs';
import { cpuPerChild, threadCpu } from './lib/thread-cpu.mjs';

const [runner = 'worker', n = '256', p = '64', reps = '4', cpu = '0', latency = String(L)] = process.argv.slice(2);
const N = Number(n);
const cpuMs = Number(cpu);
const scripts = [
  {
    match: 'root',
    latencyMs: Number(latency),
    turns: parentTurns(N, 'subagent', (i) => ({ description: `child ${i}`, prompt: `child-task #${i}` })),
  },
  { match: 'child-task ', latencyMs: Number(latency), cpuMs, turns: childTurns },
];
const baseline = threadCpu(); // before the runtime: its pool threads count as `started`
const brood = makeBrood({ runner, scripts, maxParallelToolCalls: Number(p), threads: 2 });
brood.tools.register(noopTool());
installDelegation(brood);
const once = async () => {
  const agent = await brood.createAgent({ model: ROUTE });
  const t0 = performance.now();
  const result = await agent.run('root');
  const ms = performance.now() - t0;
  await agent.dispose();
  if (result.stopReason !== 'completed') throw new Error(result.diagnostic);
  return ms;
};
console.log('warm-up', (await once()).toFixed(1));
const times = [];
const from = threadCpu();
for (let i = 0; i < Number(reps); i++) times.push((await once()).toFixed(1));
const used = cpuPerChild(baseline, from, N * Number(reps));
console.log(
  runner,
  `N=${N} P=${p} C=${cpuMs} L=${latency}`,
  times.join(' '),
  `| CPU ms/child: main ${used.main}, pool ${used.started}, V8 helpers ${used.background}`,
);
await brood.close();
