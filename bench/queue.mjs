// `npm run bench -- --queue`: latency-only fan-out (C = 0) with the children's drivers on two local
// `brood host` processes (queueRunner over a private Redis), beside the floor and the worker runner,
// interleaved per repetition like the main fan-out table. Per-child overhead is the makespan above
// the floor, amortised over the N children (P = 64 run at once, so it is not a per-child latency).
import * as brood from '../dist/index.js';
import { burnerPool, floorFanout } from './floor.mjs';
import { installDelegation, makeBrood, noopTool, timedRun } from './lib/brood.mjs';
import { startRedisAndHosts } from './lib/redis-hosts.mjs';
import { attempt } from './lib/run-guard.mjs';
import { childTurns, idealMs, L, parentTurns, THREADS } from './lib/schedule.mjs';
import { instrumented, median, procCpuMs, round } from './lib/stats.mjs';

const { createBrood, queueRunner, scriptedModels, spawnProvider } = brood;

/** CPU ms a process has used so far, all its threads. */
const processCpuMs = (pid) => procCpuMs(`/proc/${pid}/stat`);

/**
 * Redis commands per run, from INFO commandstats (reset before the run): calls and µs of Redis time
 * by command. A script's inner commands are counted too (and its µs include theirs): EVALSHA calls
 * are BullMQ's scripts, LPUSH and BLMPOP the link's batches.
 */
async function commandStats(redis) {
  const info = await redis.info('commandstats');
  const stats = {};
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([\w|-]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (match && match[1] !== 'info' && !match[1].startsWith('config'))
      stats[match[1]] = { calls: Number(match[2]), us: Number(match[3]) };
  }
  return stats;
}

/** Per child: the commands that cost Redis most (calls and µs), most expensive first. */
function commandsPerChild(stats, n) {
  return Object.entries(stats)
    .sort((a, b) => b[1].us - a[1].us)
    .slice(0, 8)
    .map(([command, { calls, us }]) => ({ command, calls: round(calls / n, 2), us: round(us / n, 1) }));
}

/** CPU used by the parent, the hosts and Redis during `run` (what the two cores had to give). */
async function withCpu(hosts, redis, run) {
  const pids = { parent: process.pid, hosts: hosts.pids, redis: hosts.redisPid };
  const read = () => ({
    parent: processCpuMs(pids.parent),
    hosts: pids.hosts.reduce((sum, pid) => sum + processCpuMs(pid), 0),
    redis: processCpuMs(pids.redis),
  });
  await redis.config('RESETSTAT');
  const before = read();
  await run();
  const after = read();
  const commands = await commandStats(redis);
  const cpu = Object.fromEntries(Object.keys(before).map((k) => [k, after[k] - before[k]]));
  cpu.total = cpu.parent + cpu.hosts + cpu.redis;
  return { cpu, commands };
}
const P = 64;
const HOSTS = 2;
const rootPrompt = (n) => `queue-root n=${n};`;

function scripts(ns) {
  return [
    ...ns.map((n) => ({
      match: rootPrompt(n),
      latencyMs: L,
      turns: parentTurns(n, 'subagent', (i) => ({ description: `child ${i}`, prompt: `queue-child #${i}` })),
    })),
    { match: 'queue-child ', latencyMs: L, turns: childTurns },
  ];
}

const fanOnce = (runtime, n) => timedRun(runtime, rootPrompt(n), `queue fan-out n=${n}`);

export async function runQueueFanout({ quick, log }) {
  const ns = [16, 64, 256];
  const hosts = await startRedisAndHosts({
    hosts: HOSTS,
    threads: Math.max(1, Math.floor(THREADS / HOSTS)),
    queue: 'bench',
  });
  // A client of the hosts' Redis, for its command counts only.
  const { Redis } = await import('ioredis');
  const redis = new Redis(hosts.url);
  const pool = burnerPool(THREADS);
  // The parent and its local pool as in the worker rows; only the children go to the hosts.
  const queued = createBrood({
    maxParallelToolCalls: P,
    pool: { threads: THREADS },
    models: [scriptedModels({ id: 'scripted', scripts: scripts(ns) })],
    providers: [spawnProvider({ runner: queueRunner({ connection: hosts.url, queue: 'bench' }) })],
  });
  const worker = makeBrood({ runner: 'worker', scripts: scripts(ns), maxParallelToolCalls: P, threads: THREADS });
  try {
    for (const runtime of [queued, worker]) {
      runtime.tools.register(noopTool());
      installDelegation(runtime);
      await fanOnce(runtime, 16); // warm-up: connections, host pools, JIT
    }
    const rows = [];
    for (const n of [64, 256]) {
      // One untimed first run of each configuration, as in the main fan-out table: the first fan-out
      // of a size still compiles code that later ones reuse (in the parent and in every host).
      for (const runtime of [queued, worker]) await fanOnce(runtime, n);
      const reps = quick ? 1 : n >= 256 ? 2 : 3;
      const samples = { floor: [], worker: [], queue: [] };
      const cpu = [];
      for (let i = 0; i < reps; i++) {
        samples.floor.push((await instrumented(() => floorFanout(pool, { n, p: P, cpuMs: 0 }))).ms);
        samples.worker.push((await instrumented(() => fanOnce(worker, n))).ms);
        // CPU is read around the fan-out alone (instrumented's GC before its clock starts is not in it).
        const queuedRun = await instrumented(() => withCpu(hosts, redis, () => fanOnce(queued, n)));
        samples.queue.push(queuedRun.ms);
        cpu.push({ ...queuedRun.value.cpu, ms: queuedRun.ms, commands: queuedRun.value.commands });
      }
      const mid = (key) => round(median(samples[key]), 1);
      const row = {
        n,
        p: P,
        cpuMs: 0,
        idealMs: idealMs({ n, p: P, cpuMs: 0 }),
        floorMs: mid('floor'),
        workerMs: mid('worker'),
        queueMs: mid('queue'),
      };
      row.queueOverFloor = round(row.queueMs / row.floorMs, 2);
      row.queueOverWorker = round(row.queueMs / row.workerMs, 2);
      row.perChildOverheadMs = round((row.queueMs - row.floorMs) / n, 2);
      // CPU of one queued run (median by total): with every process on these cores, the run cannot
      // take less wall time than total / cores.
      const { ms: runMs, commands, ...mine } = cpu.sort((a, b) => a.total - b.total)[Math.floor(cpu.length / 2)];
      row.queueCpuMs = mine;
      // Per child, by process and in total: the target is ≤ 2.0 ms in total at N=256.
      row.queueCpuPerChildMs = Object.fromEntries(Object.entries(mine).map(([k, v]) => [k, round(v / n, 2)]));
      // What each child cost Redis, by command (the same run): how chatty the queue and the link are.
      row.redisCommandsPerChild = commandsPerChild(commands, n);
      const calls = Object.values(commands).reduce((sum, { calls: c }) => sum + c, 0);
      row.redisCallsPerChild = round(calls / n, 1);
      row.cpuBoundMinimumMs = round(mine.total / THREADS, 0);
      // Share of the machine's cores that run used (1 = every core busy for the whole makespan).
      row.queueCpuUtilization = round(mine.total / (runMs * THREADS), 2);
      row.samplesMs = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.map((x) => round(x, 1))]));
      log(
        `queue fan-out N=${n} P=${P}: floor ${row.floorMs} worker ${row.workerMs} queue ${row.queueMs} (×${row.queueOverFloor} floor, ${row.perChildOverheadMs} ms/child); CPU of a queued run ${JSON.stringify(mine)} ms (per child ${JSON.stringify(row.queueCpuPerChildMs)}), so ≥ ${row.cpuBoundMinimumMs} ms on ${THREADS} cores (cores busy ${row.queueCpuUtilization}); Redis per child ${row.redisCallsPerChild} calls, top ${row.redisCommandsPerChild.map((c) => `${c.command} ${c.calls}×/${c.us}µs`).join(', ')}`,
      );
      rows.push(row);
    }
    return { hosts: HOSTS, hostThreads: Math.max(1, Math.floor(THREADS / HOSTS)), L, rows };
  } finally {
    await Promise.all([queued.close(), worker.close(), pool.close(), redis.quit()]);
    await hosts.close();
  }
}

// Alone: `node bench/queue.mjs [--quick]` (the full suite runs it with `npm run bench -- --queue`).
if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  const log = (line) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${line}`);
  const result = await attempt(() => runQueueFanout({ quick: process.argv.includes('--quick'), log }));
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
