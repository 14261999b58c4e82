// Governed fan-out. Three rows, all through the real runtime:
//  - rateLimited: N children × 2 requests (50 ms each) through the real openAICompatible adapter against a
//    loopback Chat Completions server on its own thread that enforces its own limits (32 concurrent,
//    100 requests/s, no burst; 429 + retry-after-ms beyond them; bench/lib/limited-server.mjs), at
//    real-time priority where permitted, so it reads requests when they arrive.
//    limits.providers matching the server, 25 % too high, unset; each on a warmed runtime.
//    Reported: makespan ÷ the limit-bound ideal (2N requests at 100/s), 429s received, failed children,
//    the gaps between accepted arrivals, and the start-up (run() to the first accepted request).
//  - deepCapped: depth 3, branching 8 (585 agents) under limits.agents 16: completes (no deadlock);
//    makespan ÷ (585 × latency ÷ 16).
//  - unlimitedOverhead: N=256 P=64 scripted fan-out with no limits and with an unreachable limit set,
//    as pairs interleaved on two warm runtimes in one process; the median of the per-pair ratios and
//    the parent's main-thread CPU per run for both.
//   node bench/governed.mjs [--quick] [--row rateLimited[:matching|tooHigh|unset]|deepCapped|unlimitedOverhead]

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createBrood, defineTool, openAICompatible, scriptedModels, subagentTool } from '../dist/index.js';
import { limitedServer } from './lib/limited-server.mjs';
import { percentile, procCpuMs, round } from './lib/stats.mjs';

const LATENCY_MS = 50;
const SERVER = { concurrent: 32, perSecond: 100 };

const delegate = (i) => ({ name: 'subagent', arguments: { description: `c${i}`, prompt: `child ${i}` } });
/** The lead of every fan-out here: `n` children in one message, then `ok`. */
const fanOut = (n) => ({
  match: 'fan out',
  turns: [{ toolCalls: Array.from({ length: n }, (_, i) => delegate(i)) }, { text: 'ok' }],
});

const SCRIPTED = { provider: 'scripted', model: 'scripted' };
/** The warm-up lead: `n` children through the `warm_child` tool (they call the warm-up server), then `ok`. */
const warmUp = (n) => ({
  match: 'warm up',
  turns: [
    {
      toolCalls: Array.from({ length: n }, (_, i) => ({
        name: 'warm_child',
        arguments: { description: `w${i}`, prompt: `warm ${i}` },
      })),
    },
    { text: 'ok' },
  ],
});

async function rateLimitedCase(n, limits) {
  const server = await limitedServer({ ...SERVER, latencyMs: LATENCY_MS, realtime: true });
  // The warm-up's children call a server of their own, with no limits: every pool thread has made
  // HTTP requests before the measured run, as in a runtime that has been serving for a while.
  const warmServer = await limitedServer({ concurrent: 1_000_000, perSecond: 1_000_000, latencyMs: 0 });
  const brood = createBrood({
    maxParallelToolCalls: n,
    ...(limits ? { limits } : {}),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [fanOut(n), warmUp(n)],
      }),
      openAICompatible({ id: 'loop', baseURL: server.baseURL, apiKey: 'bench', models: ['m'], stream: false }),
      openAICompatible({ id: 'warm', baseURL: warmServer.baseURL, apiKey: 'bench', models: ['m'], stream: false }),
    ],
  });
  brood.tools.register(
    defineTool({
      name: 'note',
      description: 'noop',
      parameters: { type: 'object', properties: {} },
      execute: () => 'ok',
    }),
  );
  brood.use(subagentTool({ provider: 'spawn', agentOptions: { provider: 'loop', model: 'm' } }));
  brood.use(
    subagentTool({ provider: 'spawn', toolName: 'warm_child', agentOptions: { provider: 'warm', model: 'm' } }),
  );
  // The pool's threads start and the code is warm before the measured run, as in the other rows; the
  // warm-up's children never reach the limited server.
  await (await brood.createAgent({ model: SCRIPTED })).run('warm up');
  let failed = 0;
  brood.subagents.on('end', (event) => {
    if (event.stopReason !== 'completed') failed += 1;
  });
  const root = await brood.createAgent({ model: SCRIPTED });
  const started = performance.now();
  await root.run('fan out');
  const makespanMs = performance.now() - started;
  const startedAt = performance.timeOrigin + started;
  await brood.close();
  const counts = await server.counts();
  await server.close();
  await warmServer.close();
  const idealMs = ((2 * n) / SERVER.perSecond) * 1000;
  return {
    makespanMs: round(makespanMs, 0),
    idealMs,
    ratio: round(makespanMs / idealMs, 3),
    throttled: counts.throttled,
    failedChildren: failed,
    // 'realtime' when the server thread could take real-time scheduling (bench/lib/limited-server.mjs).
    serverPriority: server.priority,
    maxInFlight: counts.maxInFlight,
    arrivalGapMs: gapSummary(counts.gaps),
    // From run() to the first request the server accepted: the fan-out's start-up, before any pacing.
    firstArrivalMs: round(counts.firstAt - startedAt, 0),
    // The same ratio from the first arrival on: how well the requests were paced once they flowed.
    pacedRatio: round((makespanMs - (counts.firstAt - startedAt)) / idealMs, 3),
  };
}

/**
 * Gaps between consecutive accepted arrivals at the server: the arrival jitter the client must stay
 * within (a gap under spacing - tolerance would be refused).
 */
function gapSummary(gaps) {
  const spacing = 1000 / SERVER.perSecond;
  return {
    p1: round(percentile(gaps, 1), 2),
    p50: round(percentile(gaps, 50), 2),
    p99: round(percentile(gaps, 99), 2),
    max: round(Math.max(...gaps), 2),
    overSpacingPlus5: gaps.filter((gap) => gap > spacing + 5).length,
  };
}

async function runRateLimited(n, log, only) {
  const matching = { providers: { loop: { concurrent: SERVER.concurrent, requestsPerMinute: SERVER.perSecond * 60 } } };
  const tooHigh = {
    providers: { loop: { concurrent: SERVER.concurrent * 1.25, requestsPerMinute: SERVER.perSecond * 60 * 1.25 } },
  };
  const out = { n, requestsPerChild: 2, latencyMs: LATENCY_MS, server: SERVER };
  for (const [name, limits] of [
    ['matching', matching],
    ['tooHigh', tooHigh],
    ['unset', undefined],
  ]) {
    if (only !== undefined && only !== name) continue;
    out[name] = await rateLimitedCase(n, limits);
    log(`governed rateLimited ${name}: ${JSON.stringify(out[name])}`);
  }
  return out;
}

/** Scripts for a tree of `depth` levels below the root, `branching` children each. */
function treeScripts(depth, branching) {
  const scripts = [];
  const add = (name, level) => {
    const leaf = level === depth;
    const calls = Array.from({ length: branching }, (_, i) => ({
      name: 'subagent',
      arguments: { description: `${name}.${i}`, prompt: `${name}.${i}` },
    }));
    scripts.push({
      match: `/^${name.replace(/\./g, '\\.')}$/`,
      latencyMs: LATENCY_MS,
      turns: leaf ? [{ text: 'leaf' }] : [{ toolCalls: calls }, { text: 'node' }],
    });
    if (!leaf) for (let i = 0; i < branching; i++) add(`${name}.${i}`, level + 1);
  };
  add('t', 0);
  return scripts;
}

async function runDeepCapped(depth, branching, agents, log) {
  const brood = createBrood({
    maxParallelToolCalls: branching,
    limits: { agents },
    models: [scriptedModels({ id: 'scripted', scripts: treeScripts(depth, branching) })],
  });
  brood.use(subagentTool({ provider: 'spawn', maxDepth: depth }));
  let count = 1;
  brood.subagents.on('start', () => (count += 1));
  const root = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
  const started = performance.now();
  const result = await root.run('t');
  const makespanMs = performance.now() - started;
  await brood.close();
  const boundMs = (count * LATENCY_MS) / agents;
  const out = {
    depth,
    branching,
    agentsLimit: agents,
    agents: count,
    completed: result.stopReason === 'completed',
    makespanMs: round(makespanMs, 0),
    boundMs,
    ratio: round(makespanMs / boundMs, 3),
  };
  log(`governed deepCapped: ${JSON.stringify(out)}`);
  return out;
}

/** A warm runtime for the overhead row: its pool started and its code warmed by two fan-outs first. */
async function overheadRuntime(n, p, limits) {
  const brood = createBrood({
    maxParallelToolCalls: p,
    ...(limits ? { limits } : {}),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [fanOut(n), { match: 'child', latencyMs: LATENCY_MS, turns: [{ text: 'done' }] }],
      }),
    ],
  });
  brood.use(subagentTool({ provider: 'spawn' }));
  const fan = async () => {
    const root = await brood.createAgent({ model: SCRIPTED });
    await root.run('fan out');
  };
  await fan();
  await fan();
  return { brood, fan };
}

/**
 * The main thread's CPU time so far: the scheduler's nanosecond count (/proc schedstat), else the
 * 10 ms ticks of /proc stat.
 */
function mainThreadCpuMs() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return procCpuMs(`/proc/self/task/${process.pid}/stat`);
  }
}

/**
 * One measured fan-out: its wall time, the parent's main-thread CPU, its event-loop busy time (wall
 * time, so it counts time the thread waited for a core), and the whole process's CPU.
 */
async function measuredFanOut(fan) {
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const main0 = mainThreadCpuMs();
  const started = performance.now();
  await fan();
  const ms = performance.now() - started;
  const elu = performance.eventLoopUtilization(elu0);
  const cpu = process.cpuUsage(cpu0);
  return {
    ms,
    mainCpuMs: mainThreadCpuMs() - main0,
    mainBusyMs: elu.active,
    processCpuMs: (cpu.user + cpu.system) / 1000,
  };
}

/**
 * The unlimited fan-out with and without an unreachable limit, as pairs interleaved on two warm
 * runtimes in one process (which goes first alternates: the second of a pair tends to run faster).
 * The figure is the median of the per-pair ratios; the CPU columns say whether the limit path costs
 * anything, whatever the wall times' noise.
 */
async function runUnlimitedOverhead(n, p, pairs, log) {
  const unreachable = {
    agents: 1_000_000,
    modelRequests: 1_000_000,
    providers: { scripted: { concurrent: 1_000_000 } },
  };
  const plain = await overheadRuntime(n, p, undefined);
  const limited = await overheadRuntime(n, p, unreachable);
  const runs = { plain: [], limited: [] };
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 === 0 ? ['plain', 'limited'] : ['limited', 'plain'];
    for (const name of order) runs[name].push(await measuredFanOut(name === 'plain' ? plain.fan : limited.fan));
  }
  await plain.brood.close();
  await limited.brood.close();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const of = (name, key) => runs[name].map((run) => run[key]);
  const perPair = runs.plain.map((run, i) => runs.limited[i].ms / run.ms);
  const perRun = (name, key) => round(sum(of(name, key)) / pairs, 1);
  const out = {
    n,
    p,
    pairs,
    unlimitedMs: round(median(of('plain', 'ms')), 1),
    unreachableLimitMs: round(median(of('limited', 'ms')), 1),
    // The median of the per-pair ratios (each pair ran back to back, so shares its machine's load).
    ratio: round(median(perPair), 3),
    pairRatios: perPair.map((r) => round(r, 3)),
    cpuPerRunMs: {
      unlimited: {
        main: perRun('plain', 'mainCpuMs'),
        mainBusy: perRun('plain', 'mainBusyMs'),
        process: perRun('plain', 'processCpuMs'),
      },
      unreachableLimit: {
        main: perRun('limited', 'mainCpuMs'),
        mainBusy: perRun('limited', 'mainBusyMs'),
        process: perRun('limited', 'processCpuMs'),
      },
    },
    mainCpuRatio: round(sum(of('limited', 'mainCpuMs')) / sum(of('plain', 'mainCpuMs')), 3),
    load: loadavg().map((x) => round(x, 2)),
  };
  log(`governed unlimitedOverhead: ${JSON.stringify(out)}`);
  return out;
}

export async function runGoverned({ quick = false, log = console.log } = {}) {
  return {
    rateLimited: await runRateLimited(quick ? 64 : 256, log),
    deepCapped: await runDeepCapped(3, quick ? 4 : 8, 16, log),
    unlimitedOverhead: await runUnlimitedOverhead(256, 64, quick ? 4 : 16, log),
  };
}

/** `--row rateLimited[:matching]|deepCapped|unlimitedOverhead` runs one row alone (while developing). */
async function runRow(row, quick) {
  const [name, only] = row.split(':');
  if (name === 'rateLimited') return runRateLimited(quick ? 64 : 256, console.log, only);
  if (name === 'deepCapped') return runDeepCapped(3, quick ? 4 : 8, 16, console.log);
  return runUnlimitedOverhead(256, 64, quick ? 4 : 16, console.log);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  const row = process.argv[process.argv.indexOf('--row') + 1];
  const result = process.argv.includes('--row') ? await runRow(row, quick) : await runGoverned({ quick });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
