// Cost of createBrood `telemetry` (issue 34): the latency-only fan-out N=256 P=64 on a runtime with
// telemetry (the SDK's in-memory exporter behind a BatchSpanProcessor, as a host would run it) and on
// one without, interleaved round by round so machine-load drift hits both sides alike. Target: on ≤
// 1.05× off. Spans per run shows what the exporter received; the main thread's CPU per run (where
// spans are built) shows the cost apart from the wall clock, which a loaded machine blurs.
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { L, THREADS, parentTurns, childTurns } from './lib/schedule.mjs';
import { makeBrood, noopTool, installDelegation, timedRun } from './lib/brood.mjs';
import { median, procCpuMs, round } from './lib/stats.mjs';

const P = 64;
const ROOT = 'telemetry-root';

function fanoutBrood(n, telemetry) {
  const scripts = [
    {
      match: ROOT,
      latencyMs: L,
      turns: parentTurns(n, 'subagent', (i) => ({ description: `child ${i}`, prompt: `telemetry-child #${i}` })),
    },
    { match: 'telemetry-child ', latencyMs: L, turns: childTurns },
  ];
  const brood = makeBrood({ runner: 'worker', scripts, maxParallelToolCalls: P, threads: THREADS, telemetry });
  brood.tools.register(noopTool());
  installDelegation(brood);
  return brood;
}

/** CPU ms of this process's main thread so far (Linux; 10 ms ticks, so only sums over runs mean much). */
const mainThreadCpuMs = () => procCpuMs(`/proc/self/task/${process.pid}/stat`);

export async function runTelemetryCost({ quick, log }) {
  const n = quick ? 64 : 256;
  const rounds = quick ? 2 : 6;
  const exporter = new InMemorySpanExporter();
  const processor = new BatchSpanProcessor(exporter);
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [processor] });
  const off = fanoutBrood(n, undefined);
  const on = fanoutBrood(n, { tracerProvider });
  const cpu = { off: 0, on: 0 };
  const run = async (brood, side) => {
    const before = mainThreadCpuMs();
    const ms = await timedRun(brood, ROOT, 'telemetry fan-out');
    if (side) cpu[side] += mainThreadCpuMs() - before;
    return ms;
  };
  try {
    // Warm-up of both: thread start and JIT are not telemetry's cost.
    await run(off);
    await run(on);
    const offMs = [];
    const onMs = [];
    let spansPerRun = 0;
    for (let i = 0; i < rounds; i++) {
      offMs.push(await run(off, 'off'));
      exporter.reset();
      onMs.push(await run(on, 'on'));
      await processor.forceFlush();
      spansPerRun = exporter.getFinishedSpans().length;
    }
    const result = {
      n,
      p: P,
      rounds,
      offMs: round(median(offMs), 1),
      onMs: round(median(onMs), 1),
      offSamplesMs: offMs.map((v) => round(v, 1)),
      onSamplesMs: onMs.map((v) => round(v, 1)),
      onOverOff: round(median(onMs) / median(offMs), 3),
      spansPerRun,
      mainCpuMsPerRun: { off: round(cpu.off / rounds, 1), on: round(cpu.on / rounds, 1) },
    };
    log(
      `telemetry: N=${n} P=${P} off ${result.offMs} ms, on ${result.onMs} ms (${result.onOverOff}×, ${spansPerRun} spans/run; main-thread CPU/run off ${result.mainCpuMsPerRun.off} ms, on ${result.mainCpuMsPerRun.on} ms)`,
    );
    return result;
  } finally {
    await Promise.all([off.close(), on.close(), tracerProvider.shutdown()]);
  }
}
