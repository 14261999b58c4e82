// `npm run bench` entry (SPEC §12). Runs every workload in this one process so all ratios come from
// the same machine state, then writes bench/results/latest.{json,md} and makespan.svg.
//   node --expose-gc bench/run.mjs [--quick] [--out DIR]
import os from 'node:os';
import { runAbortLatency } from './abort-latency.mjs';
import { runAiSdkProxy } from './ai-sdk-proxy.mjs';
import { runApprovals } from './approvals.mjs';
import { runBudget } from './budget.mjs';
import { runCodeMode } from './code-mode.mjs';
import { runCrashResume } from './crash-resume.mjs';
import { runCrossing } from './crossing.mjs';
import { runDeepTree } from './deep-tree.mjs';
import { runEventsCost } from './events-cost.mjs';
import { runFanout } from './fanout.mjs';
import { runGoverned } from './governed.mjs';
import { attempt } from './lib/run-guard.mjs';
import { evaluateTargets } from './lib/targets.mjs';
import { runParkedContinuables } from './parked-continuables.mjs';
import { loadPeer } from './peer.mjs';
import { runQueueFanout } from './queue.mjs';
import { writeReport } from './report.mjs';
import { runSoak } from './soak.mjs';
import { runStartLatency } from './start-latency.mjs';
import { runSteadyState } from './steady-state.mjs';
import { runTelemetryCost } from './telemetry.mjs';
import { runToolRpc } from './tool-rpc.mjs';
import { runWatchHook } from './watch-hook.mjs';
import { runWideFanout } from './wide-fanout.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outIndex = args.indexOf('--out');
const outDir =
  outIndex >= 0
    ? new URL(`file://${new URL(args[outIndex + 1], `file://${process.cwd()}/`).pathname.replace(/\/?$/, '/')}`)
    : new URL('./results/', import.meta.url);

const t0 = performance.now();
const log = (line) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${line}`);

// Runtime warnings (e.g. listener-count warnings) are findings about the code under test; collect
// them for the report instead of interleaving stack hints with the progress log.
const warnings = new Map();
process.removeAllListeners('warning');
process.on('warning', (w) =>
  warnings.set(`${w.name}: ${w.message}`, (warnings.get(`${w.name}: ${w.message}`) ?? 0) + 1),
);

const notes = [];
if (typeof globalThis.gc !== 'function')
  notes.push('run without --expose-gc: RSS baselines and the parked-continuable figure are taken without forced GC');

const loadavgStart = os.loadavg().map((v) => Number(v.toFixed(2)));
const peer = await loadPeer();
log(
  `mode ${quick ? 'quick' : 'full'}; Node ${process.version}; ${os.availableParallelism()} CPUs; peer ${peer.available ? peer.version : 'unavailable'}`,
);

const fanout = await runFanout({ quick, peer, log });
const wideFanout = await attempt(() => runWideFanout({ quick, peer, log }));
const steadyState = await attempt(() => runSteadyState({ quick, log }));
const budget = await attempt(() => runBudget({ quick, log }));
const startLatency = await attempt(() => runStartLatency({ quick, log }));
const toolRpc = await attempt(() => runToolRpc({ quick, log }));
const crossing = await attempt(() => runCrossing({ quick, log }));
const deepTree = await attempt(() => runDeepTree({ quick, log }));
const parked = await attempt(() => runParkedContinuables({ quick, log }));
const watchHook = await attempt(() => runWatchHook({ quick, log }));
const codeMode = await attempt(() => runCodeMode({ quick, log }));
const eventsCost = await attempt(() => runEventsCost({ quick, log }));
const abortLatency = await attempt(() => runAbortLatency({ quick, log }));
const telemetry = await attempt(() => runTelemetryCost({ quick, log }));
const approvals = await attempt(() => runApprovals({ quick, log }));
const governed = await attempt(() => runGoverned({ quick, log }));
const soak = await attempt(() => runSoak({ quick, log }));
const aiSdk = await attempt(() => runAiSdkProxy({ quick, log }));
const crashResume = await attempt(() => runCrashResume({ quick, log }));
// `--queue`: children's drivers on two local `brood host` processes through Redis (needs redis-server).
const queue = args.includes('--queue') ? await attempt(() => runQueueFanout({ quick, log })) : undefined;

for (const [text, count] of warnings) notes.push(`process warning ×${count}: ${text}`);
const results = {
  meta: {
    date: new Date().toISOString(),
    quick,
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown',
    loadavgStart,
    loadavgEnd: os.loadavg().map((v) => Number(v.toFixed(2))),
    totalMs: Math.round(performance.now() - t0),
    peer,
  },
  fanout,
  wideFanout,
  steadyState,
  budget,
  startLatency,
  toolRpc,
  crossing,
  deepTree,
  parked,
  watchHook,
  codeMode,
  eventsCost,
  abortLatency,
  telemetry,
  approvals,
  governed,
  soak,
  aiSdk,
  crashResume,
  ...(queue ? { queue } : {}),
  notes,
};
results.targets = evaluateTargets(results);
await writeReport(results, outDir);
log(`wrote ${new URL('latest.md', outDir).pathname}`);
for (const t of results.targets) log(`${t.met ? 'met   ' : 'MISSED'} ${t.name} (${t.where}): ${t.measured} ${t.unit}`);
// Pools and peer timers are closed; exit explicitly so a stray handle in the code under test cannot hold the run open.
process.exit(0);
