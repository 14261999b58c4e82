// Profiling harness (not part of `npm run bench`): repeated queued latency-only fan-outs (P = 64)
// through two local `brood host` processes of one pool thread each, after two untimed ones (N = 16,
// then N). Prints the CPU per child of the timed runs by process and kind (user / sys from /proc), and
// per process by thread group: `main`; `early`, the threads a process has from its start (V8's
// compiler and GC helpers: TurboFan's concurrent compiles land there); `late`, the threads started
// after it (pool threads, libuv's). Also Redis's bytes in and out per child.
//   node [node flags] bench/profile-queue.mjs [N] [reps] [-- host node flags…]
// Environment: PER_REP=1 prints every timed run's CPU per child (does the compile work amortise?);
// PERF=<file> records the three node processes with `perf record -g` over the timed runs (run node and
// the hosts with --perf-basic-prof so JIT frames are named: `-- --perf-basic-prof`). Host flags such
// as --trace-opt or --trace-gc print on this process's stdout.
import { readdirSync, readFileSync } from 'node:fs';
import * as brood from '../dist/index.js';
import { installDelegation, noopTool, timedRun } from './lib/brood.mjs';
import { startRedisAndHosts } from './lib/redis-hosts.mjs';
import { childTurns, L, parentTurns } from './lib/schedule.mjs';

const { createBrood, queueRunner, scriptedModels, spawnProvider } = brood;
const cut = process.argv.indexOf('--');
const [n = '256', reps = '3'] = cut < 0 ? process.argv.slice(2) : process.argv.slice(2, cut);
const hostArgs = cut < 0 ? [] : process.argv.slice(cut + 1);
const N = Number(n);
const REPS = Number(reps);
/** Threads with a tid this close above their process's pid were there from its start. */
const EARLY_TIDS = 20;

/** CPU ms so far of every thread of `pid`, by group (see the header), user and sys apart. */
function cpuByGroup(pid) {
  const groups = { main: { user: 0, sys: 0 }, early: { user: 0, sys: 0 }, late: { user: 0, sys: 0 } };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let fields;
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    } catch {
      continue; // the thread ended meanwhile
    }
    const offset = Number(tid) - pid;
    const group = groups[offset === 0 ? 'main' : offset < EARLY_TIDS ? 'early' : 'late'];
    group.user += Number(fields[11]) * 10;
    group.sys += Number(fields[12]) * 10;
  }
  return groups;
}

function used(before, after) {
  const out = {};
  for (const [group, t] of Object.entries(after)) {
    // A late thread that ended between the reads takes its CPU with it: never below zero.
    out[group] = { user: Math.max(0, t.user - before[group].user), sys: Math.max(0, t.sys - before[group].sys) };
  }
  return out;
}

const perChild = (ms, children) => (ms / children).toFixed(2);

async function redisBytes(probe) {
  const info = await probe.info('stats');
  const read = (key) => Number(new RegExp(`${key}:(\\d+)`).exec(info)?.[1]);
  const commands = await probe.info('commandstats');
  const calls = (name) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(commands)?.[1] ?? 0);
  return {
    in: read('total_net_input_bytes'),
    out: read('total_net_output_bytes'),
    lpush: calls('lpush'),
    blmpop: calls('blmpop'),
  };
}

async function startPerf(pids) {
  const { spawn } = await import('node:child_process');
  const perf = spawn('perf', ['record', '-F', '999', '-g', '-o', process.env.PERF, '-p', pids.join(',')], {
    stdio: 'ignore',
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  return async () => {
    perf.kill('SIGINT');
    await new Promise((resolve) => perf.once('exit', resolve));
  };
}

const hosts = await startRedisAndHosts({
  hosts: 2,
  threads: 1,
  queue: 'prof',
  nodeArgs: hostArgs,
  hostStdout: hostArgs.length > 0 ? 'inherit' : 'ignore',
});
const prompt = (count) => `queue-root n=${count};`;
const rootScript = (count) => ({
  match: prompt(count),
  latencyMs: L,
  turns: parentTurns(count, 'subagent', (i) => ({ description: `child ${i}`, prompt: `queue-child #${i}` })),
});
const runtime = createBrood({
  maxParallelToolCalls: 64,
  pool: { threads: 2 },
  models: [
    scriptedModels({
      id: 'scripted',
      scripts: [rootScript(16), rootScript(N), { match: 'queue-child ', latencyMs: L, turns: childTurns }],
    }),
  ],
  providers: [spawnProvider({ runner: queueRunner({ connection: hosts.url, queue: 'prof' }) })],
});
runtime.tools.register(noopTool());
installDelegation(runtime);
const { Redis } = await import('ioredis');
const probe = new Redis(hosts.url);
try {
  await timedRun(runtime, prompt(16), 'warm-up');
  await timedRun(runtime, prompt(N), 'warm-up');
  const pids = { parent: process.pid, host1: hosts.pids[0], host2: hosts.pids[1], redis: hosts.redisPid };
  const readAll = () => Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuByGroup(pid)]));
  const bytesBefore = await redisBytes(probe);
  const stopPerf = process.env.PERF ? await startPerf([process.pid, ...hosts.pids]) : undefined;
  const before = readAll();
  const makespans = [];
  for (let rep = 0; rep < REPS; rep++) {
    const repStart = readAll();
    const t0 = performance.now();
    await timedRun(runtime, prompt(N), 'timed');
    makespans.push(Math.round(performance.now() - t0));
    if (!process.env.PER_REP) continue;
    const repEnd = readAll();
    const line = Object.keys(pids).map((name) => {
      const d = used(repStart[name], repEnd[name]);
      const sum = (g) => perChild(d[g].user + d[g].sys, N);
      return `${name} main ${sum('main')} early ${sum('early')} late ${sum('late')}`;
    });
    console.log(`run ${rep + 1}: ${line.join(' | ')}`);
  }
  await stopPerf?.();
  const after = readAll();
  const bytesAfter = await redisBytes(probe);
  const children = N * REPS;
  console.log(`N=${N} × ${REPS}, makespans ${makespans.join(' ')} ms. CPU ms per child, user / sys:`);
  let total = 0;
  for (const name of Object.keys(pids)) {
    const d = used(before[name], after[name]);
    const groups = Object.entries(d)
      .filter(([, t]) => t.user + t.sys > 0)
      .map(([group, t]) => `${group} ${perChild(t.user, children)}/${perChild(t.sys, children)}`);
    const user = d.main.user + d.early.user + d.late.user;
    const sys = d.main.sys + d.early.sys + d.late.sys;
    total += user + sys;
    console.log(`  ${name}: ${perChild(user, children)} / ${perChild(sys, children)}  (${groups.join(', ')})`);
  }
  console.log(`  total ${perChild(total, children)} ms per child`);
  console.log(
    `  Redis per child: bytes in ${perChild(bytesAfter.in - bytesBefore.in, children)}, out ${perChild(bytesAfter.out - bytesBefore.out, children)}; LPUSH ${perChild(bytesAfter.lpush - bytesBefore.lpush, children)}, BLMPOP ${perChild(bytesAfter.blmpop - bytesBefore.blmpop, children)}`,
  );
} finally {
  probe.disconnect();
  await runtime.close();
  await hosts.close();
}
process.exit(0);
