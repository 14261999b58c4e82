/**
 * When spans are built: after the burst of events that arrived together has been answered, except
 * where something reads them at once (a turn's end, the propagation of a turn's context).
 */
import { setImmediate as nextTurnOfLoop } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/types.js';
import type { AgentFacts } from '../../../src/telemetry/spans.js';
import { Telemetry } from '../../../src/telemetry/telemetry.js';
import { memoryTracing, spanNamed } from '../../support/otel.js';

const lead: AgentFacts = { id: 'lead', parentId: undefined, depth: 0 };
let seq = 0;
const at = (time: number, type: string, data: Record<string, unknown>): SessionEvent => ({
  seq: seq++,
  time,
  type,
  data,
});
const request = (time: number) =>
  at(time, 'model/request', { provider: 'p', model: 'gpt', system: '', tools: [], threadId: 0 });
const answer = (time: number) =>
  at(time, 'assistant/message', {
    text: 'hi',
    toolCalls: [],
    usage: { inputTokens: 1, outputTokens: 1 },
    finish: 'stop',
  });

async function telemetry() {
  const { provider, exporter } = memoryTracing();
  const reports: string[] = [];
  const built = new Telemetry(
    { tracerProvider: provider },
    { report: (message) => reports.push(message), serverOf: () => undefined, driver: 'inline' },
  );
  await built.ready();
  return { built, exporter, reports };
}

describe('span building order', () => {
  it('builds a burst after it is answered, with the logged times', async () => {
    const { built, exporter } = await telemetry();
    built.logged(lead, [at(10, 'turn/start', { turn: 1, messageIds: ['m1'] }), request(11)]);
    built.logged(lead, [answer(13.25)]);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    await nextTurnOfLoop();
    expect(spanNamed(exporter.getFinishedSpans(), 'chat gpt').duration).toEqual([0, 2_250_000]);
  });

  it("ends a turn's spans before the call that logged its end returns", async () => {
    const { built, exporter } = await telemetry();
    built.logged(lead, [at(1, 'turn/start', { turn: 1, messageIds: ['m1'] }), request(2)]);
    built.logged(lead, [answer(3), at(4, 'turn/end', { turn: 1, reason: 'completed' })]);
    expect(
      exporter
        .getFinishedSpans()
        .map((span) => span.name)
        .sort(),
    ).toEqual(['chat gpt', 'invoke_agent lead']);
  });

  it('builds a queued turn before its context is propagated', async () => {
    const { built } = await telemetry();
    built.logged(lead, [at(1, 'turn/start', { turn: 1, messageIds: ['m1'] })]);
    expect(built.traceHeaders('lead')?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });

  it("builds one agent's share at its turn's end and leaves the others' burst for later", async () => {
    const { built, exporter } = await telemetry();
    const solo = { id: 'solo', parentId: undefined, depth: 0 };
    built.logged(lead, [at(1, 'turn/start', { turn: 1, messageIds: ['m1'] }), request(2), answer(3)]);
    built.logged(solo, [at(1, 'turn/start', { turn: 1, messageIds: ['m2'] }), request(2), answer(4)]);
    built.logged(solo, [at(5, 'turn/end', { turn: 1, reason: 'completed' })]);
    expect(
      exporter
        .getFinishedSpans()
        .map((span) => span.name)
        .sort(),
    ).toEqual(['chat gpt', 'invoke_agent solo']);
    await nextTurnOfLoop();
    expect(exporter.getFinishedSpans()).toHaveLength(3);
  });

  it("nests a child under its parent's queued call when the child's turn ends first", async () => {
    const { built, exporter } = await telemetry();
    const child = { id: 'child', parentId: 'lead', depth: 1 };
    built.logged(lead, [
      at(1, 'turn/start', { turn: 1, messageIds: ['m1'] }),
      at(2, 'tool/call', { callId: 'c1', name: 'subagent', arguments: '{}' }),
    ]);
    const request = {}; // a start request made while call c1 ran
    built.withCall('lead', 'c1', () => built.startedBy(request));
    built.childStarted(child, 'foreground', 'spawn', request);
    built.logged(child, [
      at(3, 'turn/start', { turn: 1, messageIds: ['x'] }),
      at(4, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    built.logged(lead, [
      at(5, 'tool/result', { callId: 'c1', name: 'subagent', isError: false, content: 'ok' }),
      at(6, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    const finished = exporter.getFinishedSpans();
    const call = spanNamed(finished, 'execute_tool subagent');
    expect(spanNamed(finished, 'invoke_agent child').parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  });

  it('builds a grandchild that ends first under the queued calls of both its ancestors', async () => {
    const { built, exporter } = await telemetry();
    const mid = { id: 'mid', parentId: 'lead', depth: 1 };
    const leaf = { id: 'leaf', parentId: 'mid', depth: 2 };
    const delegate = (agent: AgentFacts, child: AgentFacts, callId: string, time: number) => {
      built.logged(agent, [
        at(time, 'turn/start', { turn: 1, messageIds: [`m-${agent.id}`] }),
        at(time + 1, 'tool/call', { callId, name: 'subagent', arguments: '{}' }),
      ]);
      const request = {};
      built.withCall(agent.id, callId, () => built.startedBy(request));
      built.childStarted(child, 'foreground', 'spawn', request);
    };
    delegate(lead, mid, 'c-lead', 1);
    delegate(mid, leaf, 'c-mid', 3);
    built.logged(leaf, [
      at(5, 'turn/start', { turn: 1, messageIds: ['x'] }),
      at(6, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    const leafSpan = spanNamed(exporter.getFinishedSpans(), 'invoke_agent leaf');
    await nextTurnOfLoop();
    built.forget('mid');
    built.forget('lead');
    const finished = exporter.getFinishedSpans();
    const callOf = (agentId: string) =>
      finished.find(
        (span) => span.name === 'execute_tool subagent' && span.attributes['gen_ai.tool.call.id'] === `c-${agentId}`,
      );
    expect(leafSpan.parentSpanContext?.spanId).toBe(callOf('mid')?.spanContext().spanId);
    expect(spanNamed(finished, 'invoke_agent mid').parentSpanContext?.spanId).toBe(
      callOf('lead')?.spanContext().spanId,
    );
  });

  it("links a continuable child's run to the call that sent it a message, read while that call ran", async () => {
    const { built, exporter } = await telemetry();
    const kid = { id: 'kid', parentId: 'lead', depth: 1 };
    built.logged(lead, [
      at(1, 'turn/start', { turn: 1, messageIds: ['m1'] }),
      at(2, 'tool/call', { callId: 'c2', name: 'send_message', arguments: '{}' }),
    ]);
    const sender = built.withCall('lead', 'c2', () => built.runningCall());
    expect(built.runningCall()).toBeUndefined();
    built.wokenBy('kid', sender);
    built.childStarted(kid, 'continuable', 'spawn');
    built.logged(kid, [
      at(3, 'turn/start', { turn: 1, messageIds: ['x'] }),
      at(4, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    // Its next run was woken by no call: it keeps the link it had.
    built.childStarted(kid, 'continuable', 'spawn');
    built.logged(kid, [
      at(5, 'turn/start', { turn: 2, messageIds: ['y'] }),
      at(6, 'turn/end', { turn: 2, reason: 'completed' }),
    ]);
    built.logged(lead, [
      at(7, 'tool/result', { callId: 'c2', name: 'send_message', isError: false, content: 'ok' }),
      at(8, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    const finished = exporter.getFinishedSpans();
    const call = spanNamed(finished, 'execute_tool send_message');
    const runs = finished.filter((span) => span.name === 'invoke_agent kid');
    expect(runs.map((run) => run.links.map((link) => link.context.spanId))).toEqual([
      [call.spanContext().spanId],
      [call.spanContext().spanId],
    ]);
  });

  it('reports a tracer that throws and still builds what follows', async () => {
    const { built, exporter, reports } = await telemetry();
    // A tool result for a call nobody started is ignored; a malformed event throws inside the builder.
    built.logged(lead, [{ seq: 0, time: 1, type: 'turn/start', data: null as never }]);
    built.logged(lead, [
      at(2, 'turn/start', { turn: 1, messageIds: ['m1'] }),
      at(3, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    expect(reports).toHaveLength(1);
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['invoke_agent lead']);
  });
});
