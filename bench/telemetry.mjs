// Cost of createBrood `telemetry`: the latency-only fan-out N=256 P=64 on a runtime with
// telemetry (the SDK's in-memory exporter behind a BatchSpanProcessor, as a host would run it) and on
// one without, interleaved round by round so machine-load drift hits both sides alike. Target: on ≤
// 1.05× off. Spans per run shows what the exporter received; the main thread's CPU per run (where
// spans are built) shows the cost apart from the wall clock, which a loaded machine blurs.
//
// A third runtime is the floor, what any instrumentation must pay for these spans: no `telemetry`;
// as the parent's session store receives the events, the same spans (names, kinds, attributes,
// parents, times) are made the cheapest honest way with the same SDK setup (see floorSessions). The
// floor's main-thread CPU above `off` per span is the SDK's own; `on` above `floor` is brood's.
// Every figure is a median over many interleaved rounds: ratios and CPU differences per round.

import { readFileSync } from 'node:fs';
import * as otel from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { memorySessions } from '../dist/index.js';
import { installDelegation, makeBrood, noopTool, timedRun } from './lib/brood.mjs';
import { childTurns, L, parentTurns, THREADS } from './lib/schedule.mjs';
import { median, percentile, round } from './lib/stats.mjs';

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

/** An epoch-ms time as an HrTime (what the SDK keeps; a number costs it a clock read to classify). */
const hrTime = (ms) => [Math.trunc(ms / 1000), Math.round((ms % 1000) * 1e6)];
/** When a logged fact happened: the driver's stamp when it has one (as brood reads it). */
const factTime = (event) => (event.data.at !== undefined && event.data.at <= event.time ? event.data.at : event.time);

/**
 * The floor: memorySessions() whose appends make the spans brood makes, the cheapest honest way an
 * instrumentation can with the host's SDK (the same provider, processor, exporter, id generator and
 * sampler). Same names, kinds and attribute sets, every attribute known at start given in startSpan's
 * options, explicit HrTime start and end, parents through the api's own contexts: a child's turn under
 * the parent's `execute_tool subagent` span, a turn's chat and tool spans under the turn. A chat span
 * is made at its answer in one call, as nothing nests under it; a turn's stop reason is the one
 * attribute set after start (it is not known before). No error paths: the fan-out has no failures.
 */
export function floorSessions(tracer, inner = memorySessions(), clock = undefined) {
  /** Per session: its header, label, open turn, pending request, open calls, subagent calls not yet claimed. */
  const agents = new Map();
  const agentOf = (id) => {
    let agent = agents.get(id);
    if (agent === undefined) {
      agent = { header: undefined, label: undefined, turn: undefined, context: undefined, chat: undefined };
      agent.calls = new Map();
      agent.unclaimed = [];
      agents.set(id, agent);
    }
    return agent;
  };
  const startTurn = (id, agent, event) => {
    const header = agent.header;
    const parent = header?.parentSession === undefined ? undefined : agents.get(header.parentSession);
    const call = parent?.unclaimed.shift();
    const attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': id,
      'gen_ai.conversation.id': id,
      'brood.depth': header?.delegationDepth ?? 0,
      'brood.delegation.mode': parent === undefined ? 'top' : 'foreground',
      'brood.runner': parent === undefined ? 'host' : 'spawn',
      'brood.driver': 'worker',
      'brood.turn': event.data.turn,
    };
    if (agent.label !== undefined) attributes['gen_ai.agent.name'] = agent.label;
    if (parent !== undefined) attributes['brood.parent.id'] = header.parentSession;
    const context = call === undefined ? otel.ROOT_CONTEXT : otel.trace.setSpan(otel.ROOT_CONTEXT, call);
    const name = `invoke_agent ${agent.label ?? id}`;
    agent.turn = tracer.startSpan(name, { kind: 0, attributes, startTime: hrTime(event.time) }, context);
    agent.context = otel.trace.setSpan(context, agent.turn);
  };
  const endChat = (agent, event) => {
    const { provider, model, start } = agent.chat;
    agent.chat = undefined;
    const attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
      'gen_ai.response.model': model,
      'gen_ai.usage.input_tokens': event.data.usage.inputTokens,
      'gen_ai.usage.output_tokens': event.data.usage.outputTokens,
      'gen_ai.response.finish_reasons': [event.data.finish],
    };
    const options = { kind: 2, attributes, startTime: hrTime(start) };
    tracer.startSpan(`chat ${model}`, options, agent.context).end(hrTime(factTime(event)));
  };
  const startCall = (agent, event) => {
    const { callId, name } = event.data;
    const attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': callId,
      'gen_ai.tool.type': 'function',
    };
    const options = { kind: 0, attributes, startTime: hrTime(factTime(event)) };
    const span = tracer.startSpan(`execute_tool ${name}`, options, agent.context);
    agent.calls.set(callId, span);
    if (name === 'subagent') agent.unclaimed.push(span);
  };
  const endCall = (agent, event) => {
    const span = agent.calls.get(event.data.callId);
    agent.calls.delete(event.data.callId);
    span?.end(hrTime(factTime(event)));
  };
  const endTurn = (id, agent, event) => {
    agent.turn?.setAttribute('brood.stop_reason', event.data.reason);
    agent.turn?.end(hrTime(event.time));
    agents.delete(id);
  };
  const apply = (id, agent, event) => {
    switch (event.type) {
      case 'subagent/descriptor':
        agent.label = event.data.label;
        return;
      case 'turn/start':
        return startTurn(id, agent, event);
      case 'model/request':
        agent.chat = { provider: event.data.provider, model: event.data.model, start: factTime(event) };
        return;
      case 'assistant/message':
        return endChat(agent, event);
      case 'tool/call':
        return startCall(agent, event);
      case 'tool/result':
        return endCall(agent, event);
      case 'turn/end':
        return endTurn(id, agent, event);
    }
  };
  return {
    create(header) {
      agentOf(header.id).header = header;
      return inner.create(header);
    },
    append(id, events) {
      const start = clock?.start();
      const agent = agentOf(id);
      for (const event of events) apply(id, agent, event);
      clock?.stop(start);
      return inner.append(id, events);
    },
    flush: (id) => inner.flush(id),
    read: (id) => inner.read(id),
    list: () => inner.list(),
  };
}

/**
 * Time spent making the floor's spans in place, summed per run: each store append's span work is timed
 * (two clock reads); one that took over 0.2 ms was preempted on the shared machine (the work itself
 * takes microseconds) and is counted apart instead. A second floor measure beside the CPU
 * differences, which a loaded machine spreads widely.
 */
function inPlaceClock() {
  const clock = {
    ms: 0,
    preempted: 0,
    start: () => performance.now(),
    stop(start) {
      const took = performance.now() - start;
      if (took > 0.2) clock.preempted++;
      else clock.ms += took;
    },
    reset() {
      clock.ms = 0;
      clock.preempted = 0;
    },
  };
  return clock;
}

/** CPU ms of this process's main thread so far (Linux schedstat: nanoseconds, unlike stat's 10 ms ticks). */
function mainThreadCpuMs() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** Per round, `a`'s sample less `b`'s (both sides ran in the same round, so load drift cancels). */
const perRound = (a, b) => a.map((value, i) => value - b[i]);

export async function runTelemetryCost({ quick, log }) {
  const n = quick ? 64 : 256;
  // Wall ratios of single rounds spread by ±5 % on the shared machine: the medians need many rounds.
  const rounds = quick ? 3 : 20;
  const warmups = quick ? 1 : 2;
  const tracing = { floor: memoryTracing(), on: memoryTracing() };
  const clock = inPlaceClock();
  const inPlace = { ms: [], preempted: [] };
  const broods = {
    off: fanoutBrood(n, {}),
    floor: fanoutBrood(n, { sessions: floorSessions(tracing.floor.provider.getTracer('floor'), undefined, clock) }),
    on: fanoutBrood(n, { telemetry: { tracerProvider: tracing.on.provider } }),
  };
  const ms = { off: [], floor: [], on: [] };
  const cpu = { off: [], floor: [], on: [] };
  const spans = { floor: 0, on: 0 };
  const run = async (side, measured) => {
    clock.reset();
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
    if (side !== 'floor') return;
    inPlace.ms.push(clock.ms);
    inPlace.preempted.push(clock.preempted);
  };
  try {
    // Warm-up of all: thread start and JIT are not telemetry's cost.
    for (let i = 0; i < warmups; i++) for (const side of SIDES) await run(side, false);
    for (let i = 0; i < rounds; i++) {
      // Each side takes each place in the round in turn (the later runs of a round can differ).
      for (let k = 0; k < SIDES.length; k++) await run(SIDES[(i + k) % SIDES.length], true);
    }
    const ratio = (side) => round(median(ms[side].map((value, i) => value / ms.off[i])), 3);
    const cpuPerRun = (side) => round(median(cpu[side]), 1);
    // Main-thread CPU per span: the median over rounds of one side's run less the other's in that round.
    const usPerSpan = (side, base, p = 50) =>
      round((percentile(perRound(cpu[side], cpu[base]), p) / spans.on) * 1000, 1);
    // The spread of those per-round figures (25th and 75th percentiles): how far one median can be trusted.
    const usSpread = (side, base) => [usPerSpan(side, base, 25), usPerSpan(side, base, 75)];
    const offMs = median(ms.off);
    // The wall budget of on ≤ 1.05× off, and what the floor's spans cost the parent's main thread (the
    // run's critical path: it claims every turn, runs every delegation call, logs every event).
    const budgetMs = 0.05 * offMs;
    const floorUs = usPerSpan('floor', 'off');
    const floorSpansMs = (floorUs * spans.on) / 1000;
    const result = {
      n,
      p: P,
      rounds,
      offMs: round(offMs, 1),
      onMs: round(median(ms.on), 1),
      floorMs: round(median(ms.floor), 1),
      offSamplesMs: ms.off.map((v) => round(v, 1)),
      onSamplesMs: ms.on.map((v) => round(v, 1)),
      floorSamplesMs: ms.floor.map((v) => round(v, 1)),
      // Medians of the per-round ratios (each round's sides ran back to back).
      onOverOff: ratio('on'),
      floorOverOff: ratio('floor'),
      spansPerRun: spans.on,
      floorSpansPerRun: spans.floor,
      mainCpuMsPerRun: { off: cpuPerRun('off'), floor: cpuPerRun('floor'), on: cpuPerRun('on') },
      mainCpuSamplesMs: Object.fromEntries(SIDES.map((side) => [side, cpu[side].map((v) => round(v, 1))])),
      // The floor's own main-thread CPU per span (above off), brood's above the floor, and on's in all.
      mainCpuUsPerSpan: { floor: floorUs, broodAboveFloor: usPerSpan('on', 'floor'), on: usPerSpan('on', 'off') },
      mainCpuUsPerSpanQuartiles: { floor: usSpread('floor', 'off'), broodAboveFloor: usSpread('on', 'floor') },
      // The floor's span work timed in place (store appends; preempted ones apart): µs per span, median over runs.
      floorInPlaceUsPerSpan: round((median(inPlace.ms) / spans.on) * 1000, 1),
      floorInPlacePreemptedPerRun: median(inPlace.preempted),
      budgetMs: round(budgetMs, 1),
      floorSpansMs: round(floorSpansMs, 1),
      floorFitsBudget: floorSpansMs <= budgetMs,
      load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number),
    };
    const us = result.mainCpuUsPerSpan;
    log(
      `telemetry: N=${n} P=${P} ${rounds} rounds, medians: off ${result.offMs} ms, floor ${result.floorMs} ms (${result.floorOverOff}×), on ${result.onMs} ms (${result.onOverOff}×, ${spans.on} spans/run, floor ${spans.floor}); main-thread CPU/run off ${result.mainCpuMsPerRun.off}, floor ${result.mainCpuMsPerRun.floor}, on ${result.mainCpuMsPerRun.on} ms; µs/span: floor ${us.floor} (in place ${result.floorInPlaceUsPerSpan}) [${result.mainCpuUsPerSpanQuartiles.floor.join('..')}], brood above floor ${us.broodAboveFloor} [${result.mainCpuUsPerSpanQuartiles.broodAboveFloor.join('..')}], on ${us.on}; budget (5 % of off) ${result.budgetMs} ms vs floor ${us.floor} µs × ${spans.on} = ${result.floorSpansMs} ms (${result.floorFitsBudget ? 'fits' : 'exceeds'}); load ${result.load.join(' ')}`,
    );
    return result;
  } finally {
    await Promise.all([
      ...Object.values(broods).map((brood) => brood.close()),
      ...Object.values(tracing).map(({ provider }) => provider.shutdown()),
    ]);
  }
}
