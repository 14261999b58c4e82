// SPEC §12 tool RPC. One driver issues M calls to a trivial tool inside a single assistant message.
// The tool is declared NOT concurrency-safe, so the driver's tool pool runs the calls strictly one
// after another: call i+1 is only requested after call i's result reached the driver. The parent
// stamps when each tool body returns and when the next one starts; that gap is one full proxied
// round trip (result → driver → classify + execute request → parent), with no model request in it.
import { ROUTE, makeBrood, noopTool } from './lib/brood.mjs';
import { THREADS } from './lib/schedule.mjs';
import { summarize, round } from './lib/stats.mjs';
import { withDeadline } from './lib/run-guard.mjs';

async function measureRunner(runner, calls) {
  const starts = [];
  const ends = [];
  const brood = makeBrood({
    runner,
    threads: THREADS,
    maxParallelToolCalls: 1,
    scripts: [
      {
        match: 'rpc-loop',
        turns: [
          { toolCalls: Array.from({ length: calls }, () => ({ name: 'noop', arguments: {} })) },
          { text: 'done' },
        ],
      },
    ],
  });
  brood.tools.register(
    noopTool({
      concurrencySafe: false,
      execute: () => {
        starts.push(performance.now());
        ends.push(performance.now());
        return 'ok';
      },
    }),
  );
  const agent = await brood.createAgent({ model: ROUTE });
  const result = await withDeadline(agent.run('rpc-loop'), 120_000, 'tool RPC loop');
  await brood.close();
  if (result.stopReason !== 'completed' || starts.length !== calls)
    throw new Error(`tool RPC run ended ${result.stopReason} after ${starts.length} calls`);
  const gaps = [];
  for (let i = 1; i < calls; i++) gaps.push((starts[i] - ends[i - 1]) * 1000);
  const s = summarize(gaps);
  const spanMs = starts[calls - 1] - starts[0];
  return {
    calls,
    p50Us: round(s.p50, 1),
    p99Us: round(s.p99, 1),
    meanUs: round(s.mean, 1),
    callsPerSec: round(((calls - 1) / spanMs) * 1000, 0),
  };
}

export async function runToolRpc({ quick, log }) {
  const calls = quick ? 1000 : 5000;
  const out = {};
  for (const runner of ['worker', 'inline']) {
    out[runner] = await measureRunner(runner, calls);
    log(
      `tool RPC ${runner}: p50 ${out[runner].p50Us} µs p99 ${out[runner].p99Us} µs, ${out[runner].callsPerSec} calls/s`,
    );
  }
  return out;
}
