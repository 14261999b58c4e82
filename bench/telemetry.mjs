// Cost of createBrood `telemetry` (issue 34): the latency-only fan-out N=256 P=64 on a runtime with
// telemetry (the SDK's in-memory exporter behind a BatchSpanProcessor, as a host would run it) and on
// one without, interleaved round by round so machine-load drift hits both sides alike. Target: on ≤
// 1.05× off. Spans per run shows what the exporter received; the main thread's CPU per run (where
// spans are built) shows the cost apart from the wall clock, which a loaded machine blurs.
//
// A third runtime measures the SDK's floor in place: no `telemetry`, and as the parent's session store
// receives the events that end brood's spans, the same number of spans of the same shapes (same
// attribute keys, explicit times, a parent span) made with bare SDK calls into their own
// BatchSpanProcessor and in-memory exporter. What `on` costs above `floor` is brood's own work.
import * as otel from '@opentelemetry/api';
import { readFileSync } from 'node:fs';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { memorySessions } from '../dist/index.js';
import { L, THREADS, parentTurns, childTurns } from './lib/schedule.mjs';
import { makeBrood, noopTool, installDelegation, timedRun } from './lib/brood.mjs';
import { median, round } from './lib/stats.mjs';

const P = 64;
const ROOT = 'telemetry-root';
const SIDES = ['off', 'floor', 'on'];

function fanoutBrood(n, { telemetry, sessions }) {
  const scripts = [
    {
      match: ROOT,
      latencyMs: L,
      turns: parentTurns(n, 'subagent', (i) => ({ description: `child ${i}`, prompt: `telemetry-child #${i}` })),
    },
    { match: 'telemetry-child ', latencyMs: L, turns: childTurns },
  ];
  const brood = makeBrood({
    runner: 'worker',
    scripts,
    maxParallelToolCalls: P,
    threads: THREADS,
    telemetry,
    sessions,
  });
  brood.tools.register(noopTool());
  installDelegation(brood);
  return brood;
}

function memoryTracing() {
  const exporter = new InMemorySpanExporter();
  const processor = new BatchSpanProcessor(exporter);
  return { exporter, processor, provider: new BasicTracerProvider({ spanProcessors: [processor] }) };
}

/** memorySessions() that makes one bare SDK span per logged turn end, model answer and tool result. */
function floorSessions(tracer) {
  const parent = otel.trace.setSpan(otel.ROOT_CONTEXT, tracer.startSpan('floor'));
  const turn = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.id': 'agent',
    'gen_ai.conversation.id': 'agent',
    'gen_ai.agent.name': 'child',
    'brood.depth': 1,
    'brood.parent.id': 'parent',
    'brood.delegation.mode': 'foreground',
    'brood.runner': 'spawn',
    'brood.driver': 'worker',
    'brood.turn': 1,
  };
  const chat = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'scripted',
    'gen_ai.request.model': 'scripted',
    'gen_ai.response.model': 'scripted',
    'gen_ai.usage.input_tokens': 1,
    'gen_ai.usage.output_tokens': 1,
    'gen_ai.response.finish_reasons': ['tool-calls'],
  };
  const tool = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'noop',
    'gen_ai.tool.call.id': 'call',
    'gen_ai.tool.type': 'function',
  };
  const span = (name, kind, attributes, ms) => {
    const time = [Math.trunc(ms / 1000), Math.round((ms % 1000) * 1e6)];
    tracer.startSpan(name, { kind, attributes, startTime: time }, parent).end([time[0], time[1]]);
  };
  const inner = memorySessions();
  return {
    create: (header) => inner.create(header),
    append(id, events) {
      for (const event of events) {
        if (event.type === 'turn/end') span('invoke_agent child', 0, turn, event.time);
        else if (event.type === 'assistant/message') span('chat scripted', 2, chat, event.time);
        else if (event.type === 'tool/result') span('execute_tool noop', 0, tool, event.time);
      }
      return inner.append(id, events);
    },
    flush: (id) => inner.flush(id),
    read: (id) => inner.read(id),
    list: () => inner.list(),
  };
}

/** CPU ms of this process's main thread so far (Linux schedstat: nanoseconds, unlike stat's 10 ms ticks). */
function mainThreadCpuMs() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

export async function runTelemetryCost({ quick, log }) {
  const n = quick ? 64 : 256;
  const rounds = quick ? 2 : 6;
  const tracing = { floor: memoryTracing(), on: memoryTracing() };
  const broods = {
    off: fanoutBrood(n, {}),
    floor: fanoutBrood(n, { sessions: floorSessions(tracing.floor.provider.getTracer('floor')) }),
    on: fanoutBrood(n, { telemetry: { tracerProvider: tracing.on.provider } }),
  };
  const ms = { off: [], floor: [], on: [] };
  const cpu = { off: [], floor: [], on: [] };
  const spans = { floor: 0, on: 0 };
  const run = async (side, measured) => {
    const before = mainThreadCpuMs();
    const wall = await timedRun(broods[side], ROOT, `telemetry fan-out (${side})`);
    const used = mainThreadCpuMs() - before;
    if (tracing[side]) {
      await tracing[side].processor.forceFlush();
      spans[side] = tracing[side].exporter.getFinishedSpans().length;
      // Nothing of one side's run stays on the heap into another side's run.
      tracing[side].exporter.reset();
    }
    if (!measured) return;
    ms[side].push(wall);
    cpu[side].push(used);
  };
  try {
    // Warm-up of all: thread start and JIT are not telemetry's cost.
    for (const side of SIDES) await run(side, false);
    for (let i = 0; i < rounds; i++) {
      // Each side takes each place in the round in turn (the later runs of a round can differ).
      for (let k = 0; k < SIDES.length; k++) await run(SIDES[(i + k) % SIDES.length], true);
    }
    const sum = (values) => values.reduce((a, b) => a + b, 0);
    const perRun = (side) => round(sum(cpu[side]) / rounds, 1);
    const overOff = (side) => round(median(ms[side]) / median(ms.off), 3);
    const usPerSpan = (side) => round(((sum(cpu[side]) - sum(cpu.off)) / rounds / spans[side]) * 1000, 1);
    const result = {
      n,
      p: P,
      rounds,
      offMs: round(median(ms.off), 1),
      onMs: round(median(ms.on), 1),
      floorMs: round(median(ms.floor), 1),
      offSamplesMs: ms.off.map((v) => round(v, 1)),
      onSamplesMs: ms.on.map((v) => round(v, 1)),
      floorSamplesMs: ms.floor.map((v) => round(v, 1)),
      onOverOff: overOff('on'),
      floorOverOff: overOff('floor'),
      spansPerRun: spans.on,
      floorSpansPerRun: spans.floor,
      mainCpuMsPerRun: { off: perRun('off'), floor: perRun('floor'), on: perRun('on') },
      mainCpuSamplesMs: Object.fromEntries(SIDES.map((side) => [side, cpu[side].map((v) => round(v, 1))])),
      // Main-thread CPU above `off` per span: the bare SDK's, and brood's (the SDK's included).
      mainCpuUsPerSpan: { floor: usPerSpan('floor'), on: usPerSpan('on') },
      load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number),
    };
    log(
      `telemetry: N=${n} P=${P} off ${result.offMs} ms, floor ${result.floorMs} ms (${result.floorOverOff}×), on ${result.onMs} ms (${result.onOverOff}×, ${spans.on} spans/run); main-thread CPU/run off ${result.mainCpuMsPerRun.off}, floor ${result.mainCpuMsPerRun.floor}, on ${result.mainCpuMsPerRun.on} ms (µs/span above off: floor ${result.mainCpuUsPerSpan.floor}, on ${result.mainCpuUsPerSpan.on}); load ${result.load.join(' ')}`,
    );
    return result;
  } finally {
    await Promise.all([
      ...Object.values(broods).map((brood) => brood.close()),
      ...Object.values(tracing).map(({ provider }) => provider.shutdown()),
    ]);
  }
}
