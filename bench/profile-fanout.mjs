// Profiling harness (not part of `npm run bench`): repeated latency-only fan-outs on one warm runtime,
// meant to run under `node --cpu-prof` so both the parent and the pool threads are profiled.
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile-fanout.mjs [worker|inline] [N] [P] [reps] [cpuMs]
import { parentTurns, childTurns, L } from './lib/schedule.mjs';
import { ROUTE, makeBrood, noopTool, installDelegation } from './lib/brood.mjs';
import { procCpuMs } from './lib/stats.mjs';

/** CPU ms of the main thread alone (its task's stat; the process's stat counts every thread). */
const mainThreadCpuMs = () => procCpuMs(`/proc/self/task/${process.pid}/stat`);

const [runner = 'worker', n = '256', p = '64', reps = '4', cpu = '0'] = process.argv.slice(2);
const N = Number(n);
const cpuMs = Number(cpu);
const scripts = [
  {
    match: 'root',
    latencyMs: L,
    turns: parentTurns(N, 'subagent', (i) => ({ description: `child ${i}`, prompt: `child-task #${i}` })),
  },
  { match: 'child-task ', latencyMs: L, cpuMs, turns: childTurns },
];
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
const main0 = mainThreadCpuMs();
const cpu0 = process.cpuUsage();
for (let i = 0; i < Number(reps); i++) times.push((await once()).toFixed(1));
const mainMs = mainThreadCpuMs() - main0;
const used = process.cpuUsage(cpu0);
const children = N * Number(reps);
console.log(
  runner,
  `N=${N} P=${p} C=${cpuMs}`,
  times.join(' '),
  `| main-thread CPU ${(mainMs / children).toFixed(3)} ms/child, process CPU ${((used.user + used.system) / 1000 / children).toFixed(3)} ms/child`,
);
await brood.close();
