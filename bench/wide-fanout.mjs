// Wide fan-out: one root delegating N children in one message with P = N, each child K = 3 requests
// (two tool steps, then its answer) at L = 1,000 ms, so the ideal is 2L + K·L = 5 s whatever N is and
// everything past it is time spent in the system, not in the model. Per N the systems run back to
// back (floor, worker, inline, peer) on runtimes created for that row, once each: a 10,000-child row
// is ~10 s of makespan, so repetitions are not affordable on a shared machine.
//   node --expose-gc bench/wide-fanout.mjs [--n 1000]

import { floorFanout } from './floor.mjs';
import { installDelegation, makeBrood, noopTool, ROUTE, stampedSessions } from './lib/brood.mjs';
import { attempt, withDeadline } from './lib/run-guard.mjs';
import { childTurns, parentTurns, THREADS } from './lib/schedule.mjs';
import { startBurst } from './lib/start-burst.mjs';
import { instrumented, round } from './lib/stats.mjs';
import { cpuPerChild, threadCpu } from './lib/thread-cpu.mjs';
import { loadPeer, peerFanout } from './peer.mjs';

export const WIDE_L = 1000;
const K = childTurns.length;
/** The peer is measured at the smallest width only (its own published cap is 1,000 per run). */
const PEER_MAX_N = 1000;
const WARM_N = 64;
const WARM_L = 20;

export const wideWidths = (quick) => (quick ? [1000] : [1000, 10_000]);
export const wideIdealMs = () => 2 * WIDE_L + K * WIDE_L;

const rootPrompt = (n) => `wide-root n=${n};`;

function wideScripts(ns) {
  const root = (match, n, latencyMs, childPrompt) => ({
    match,
    latencyMs,
    turns: parentTurns(n, 'subagent', (i) => ({ description: `child ${i}`, prompt: `${childPrompt}#${i}` })),
  });
  return [
    ...ns.map((n) => root(rootPrompt(n), n, WIDE_L, 'wide-child ')),
    { match: 'wide-child ', latencyMs: WIDE_L, turns: childTurns },
    // Warm-up: the same shape at a short latency, so thread start and JIT are not in the measured row.
    root('wide-warm;', WARM_N, WARM_L, 'wide-warm-child '),
    { match: 'wide-warm-child ', latencyMs: WARM_L, turns: childTurns },
  ];
}

/** A fresh runtime for one row (P = N), its store stamping appends for the start burst, warmed up. */
async function wideBrood(runner, n, scripts) {
  const burst = startBurst();
  const brood = makeBrood({
    runner,
    scripts,
    maxParallelToolCalls: n,
    threads: THREADS,
    sessions: stampedSessions(burst.onAppend),
  });
  brood.tools.register(noopTool());
  const delegation = installDelegation(brood);
  await runRoot(brood, 'wide-warm;', burst, 'wide fan-out warm-up');
  return { brood, burst, delegation };
}

/** Runs one root on a fresh agent; the burst recorder watches only this root's children. */
async function runRoot(brood, prompt, burst, what) {
  const agent = await brood.createAgent({ model: ROUTE });
  burst.watch(agent.id);
  try {
    const result = await withDeadline(agent.run(prompt), 300_000, what);
    if (result.stopReason !== 'completed')
      throw new Error(`${what} ended ${result.stopReason}: ${result.diagnostic ?? result.output}`);
  } finally {
    await agent.dispose();
  }
}

/** One measured run: makespan, peak RSS growth per child, CPU per child by thread group, loop delay. */
async function measureRow(n, baseline, run) {
  const from = threadCpu();
  const m = await instrumented(run);
  return {
    makespanMs: round(m.ms, 1),
    rssGrowthPerChildKb: round((m.rss.peakGrowthMb * 1024) / n, 1),
    rssPeakGrowthMb: round(m.rss.peakGrowthMb, 1),
    cpuMsPerChild: cpuPerChild(baseline, from, n),
    loopDelayP50Ms: round(m.loop.p50Ms),
    loopDelayP99Ms: round(m.loop.p99Ms),
  };
}

async function broodRow(runner, n, scripts, baseline) {
  const { brood, burst, delegation } = await wideBrood(runner, n, scripts);
  try {
    const row = await measureRow(n, baseline, () =>
      runRoot(brood, rootPrompt(n), burst, `wide fan-out ${runner} n=${n}`),
    );
    return { ...row, startBurst: burst.summary(n), delegation };
  } finally {
    await brood.close();
  }
}

export async function runWideFanout({ quick, peer, log, widths = wideWidths(quick) }) {
  const scripts = wideScripts(widths);
  const baseline = threadCpu(); // before any runtime: pool threads count as `started`
  const idealMs = wideIdealMs();
  const rows = [];
  for (const n of widths) {
    const row = { n, p: n, idealMs };
    row.floor = await attempt(() =>
      measureRow(n, baseline, () => floorFanout(null, { n, p: n, cpuMs: 0, latencyMs: WIDE_L })),
    );
    row.worker = await attempt(() => broodRow('worker', n, scripts, baseline));
    row.inline = await attempt(() => broodRow('inline', n, scripts, baseline));
    if (n > PEER_MAX_N) row.peer = { skipped: `measured at N = ${PEER_MAX_N} only` };
    else if (!peer.available) row.peer = { error: peer.reason };
    else
      row.peer = await attempt(() =>
        measureRow(n, baseline, () =>
          withDeadline(peerFanout({ n, p: n, cpuMs: 0, latencyMs: WIDE_L }), 300_000, 'peer wide fan-out'),
        ),
      );
    log(`wide fan-out N=${n}: ${describe(row)}`);
    rows.push(row);
  }
  return { L: WIDE_L, K, threads: THREADS, idealMs, rows };
}

function describe(row) {
  const cell = (name) => {
    const s = row[name];
    if (!s || s.makespanMs === undefined) return `${name} ${s?.error ?? s?.skipped ?? '—'}`;
    const burst = s.startBurst ? `, burst ${s.startBurst.perChildUs} µs/child` : '';
    return `${name} ${s.makespanMs} ms (${round(s.makespanMs / row.floor.makespanMs, 3)}× floor, ${s.rssGrowthPerChildKb} KB/child, loop p99 ${s.loopDelayP99Ms} ms${burst})`;
  };
  return ['floor', 'worker', 'inline', 'peer'].map(cell).join('; ');
}

// Standalone: `node --expose-gc bench/wide-fanout.mjs [--n 1000]` prints the rows as JSON.
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--n');
  const widths = at >= 0 ? [Number(args[at + 1])] : wideWidths(args.includes('--quick'));
  const t0 = performance.now();
  const log = (line) => console.error(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${line}`);
  const result = await runWideFanout({ quick: false, peer: await loadPeer(), log, widths });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
