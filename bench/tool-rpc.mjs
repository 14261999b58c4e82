// SPEC §12 tool RPC. One driver issues M calls to a trivial tool inside a single assistant message.
// The tool is declared NOT concurrency-safe, so the calls run strictly one after another: call i+1
// starts only after call i's result was committed. The parent stamps when each tool body returns and
// when the next one starts. Two messages:
//   proxied  the message also holds a run_code call (first), so the driver schedules its calls itself
//            (run_code's sandbox is in its thread): each gap is one full proxied round trip (result →
//            driver → execute request → parent), with no model request in it. This is the figure.
//   parent   the same calls without run_code, as a message usually is: the parent runs the message's
//            calls itself (DriverGateway.runTools), so a gap crosses no thread (reported beside it).
import { makeBrood, noopTool, ROUTE } from './lib/brood.mjs';
import { withDeadline } from './lib/run-guard.mjs';
import { THREADS } from './lib/schedule.mjs';
import { round, summarize } from './lib/stats.mjs';

const RUN_CODE = { name: 'run_code', arguments: { description: 'keeps the calls in the driver', code: 'return 1;' } };
const noopCalls = (calls) => Array.from({ length: calls }, () => ({ name: 'noop', arguments: {} }));

/** One assistant message of `calls` sequential calls on `brood`; the gaps between tool bodies, in µs. */
async function oneRound(brood, calls, stamps, prompt = 'rpc-loop') {
  stamps.starts.length = 0;
  stamps.ends.length = 0;
  const agent = await brood.createAgent({ model: ROUTE });
  const result = await withDeadline(agent.run(prompt), 120_000, 'tool RPC loop');
  await agent.dispose();
  if (result.stopReason !== 'completed' || stamps.starts.length !== calls)
    throw new Error(`tool RPC run ended ${result.stopReason} after ${stamps.starts.length} calls`);
  const gaps = [];
  for (let i = 1; i < calls; i++) gaps.push((stamps.starts[i] - stamps.ends[i - 1]) * 1000);
  const s = summarize(gaps);
  const spanMs = stamps.starts[calls - 1] - stamps.starts[0];
  return {
    p50Us: round(s.p50, 1),
    p99Us: round(s.p99, 1),
    meanUs: round(s.mean, 1),
    callsPerSec: round(((calls - 1) / spanMs) * 1000, 0),
  };
}

/**
 * The same message runs `rounds` times on one runtime and the last round is the figure, like the
 * fan-out table's warm runtimes: the first rounds carry the runtime's start-up (thread boot, the JIT
 * tiering up the call path over the first ~2000 calls), which is reported as `firstRun`.
 */
async function measureRunner(runner, calls, rounds) {
  const stamps = { starts: [], ends: [] };
  const brood = makeBrood({
    runner,
    threads: THREADS,
    maxParallelToolCalls: 1,
    codeMode: 'both',
    scripts: [
      {
        match: 'rpc-loop-proxied',
        turns: [{ toolCalls: [RUN_CODE, ...noopCalls(calls)] }, { text: 'done' }],
      },
      { match: 'rpc-loop', turns: [{ toolCalls: noopCalls(calls) }, { text: 'done' }] },
    ],
  });
  brood.tools.register(
    noopTool({
      concurrencySafe: false,
      execute: () => {
        stamps.starts.push(performance.now());
        stamps.ends.push(performance.now());
        return 'ok';
      },
    }),
  );
  try {
    const all = [];
    for (let r = 0; r < rounds; r++) all.push(await oneRound(brood, calls, stamps, 'rpc-loop-proxied'));
    const { callsPerSec: _, ...firstRun } = all[0];
    let parentScheduled;
    for (let r = 0; r < rounds; r++) parentScheduled = await oneRound(brood, calls, stamps);
    return { calls, ...all.at(-1), rounds, firstRun, parentScheduled };
  } finally {
    await brood.close();
  }
}

export async function runToolRpc({ quick, log }) {
  const calls = quick ? 1000 : 5000;
  const rounds = 3;
  const out = {};
  for (const runner of ['worker', 'inline']) {
    out[runner] = await measureRunner(runner, calls, rounds);
    log(
      `tool RPC ${runner}: p50 ${out[runner].p50Us} µs p99 ${out[runner].p99Us} µs, ${out[runner].callsPerSec} calls/s (round 1 of ${rounds}: p50 ${out[runner].firstRun.p50Us} µs p99 ${out[runner].firstRun.p99Us} µs); scheduled by the parent: p50 ${out[runner].parentScheduled.p50Us} µs p99 ${out[runner].parentScheduled.p99Us} µs`,
    );
  }
  return out;
}
