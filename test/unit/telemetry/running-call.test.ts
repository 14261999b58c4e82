/** Which tool call a subagent start belongs to: the call whose execute() is running synchronously. */
import { describe, expect, it } from 'vitest';
import { Telemetry } from '../../../src/telemetry/telemetry.js';
import { memoryTracing, spanNamed } from '../../support/otel.js';

async function telemetry() {
  const reports: string[] = [];
  const { provider, exporter } = memoryTracing();
  const deps = { report: (message: string) => reports.push(message), serverOf: () => undefined, driver: 'inline' };
  const made = new Telemetry({ tracerProvider: provider }, deps);
  await made.ready();
  return { telemetry: made, exporter, reports };
}

describe('Telemetry running call', () => {
  it('is the innermost call while its work runs and the outer one again after it returns', async () => {
    const { telemetry: t } = await telemetry();
    expect(t.runningCall()).toBeUndefined();
    const seen = t.withCall('lead', 'outer', () => {
      const inner = t.withCall('child', 'inner', () => t.runningCall());
      return { inner, outer: t.runningCall() };
    });
    expect(seen).toEqual({ inner: { agentId: 'child', callId: 'inner' }, outer: { agentId: 'lead', callId: 'outer' } });
    expect(t.runningCall()).toBeUndefined();
  });

  it('is restored when the call throws', async () => {
    const { telemetry: t } = await telemetry();
    const failing = () =>
      t.withCall('lead', 'outer', () => {
        throw new Error('tool failed');
      });
    expect(failing).toThrow('tool failed');
    expect(t.runningCall()).toBeUndefined();
  });

  it('is the call a child started inside it nests under; a start outside any call nests under the turn', async () => {
    const { telemetry: t, exporter, reports } = await telemetry();
    const lead = { id: 'lead', parentId: undefined, depth: 0 };
    const event = (seq: number, type: string, data: Record<string, unknown>) => ({ seq, time: 1000 + seq, type, data });
    t.logged(lead, [
      event(0, 'turn/start', { turn: 1, messageIds: ['m1'] }),
      event(1, 'tool/call', { callId: 'c1', name: 'subagent', arguments: '{}' }),
    ]);
    const inside = {};
    const outside = {};
    t.withCall('lead', 'c1', () => t.startedBy(inside));
    t.startedBy(outside);
    for (const [id, request] of [
      ['a', inside],
      ['b', outside],
    ] as const) {
      const child = { id, parentId: 'lead', depth: 1 };
      t.childStarted(child, 'foreground', 'spawn', request);
      t.logged(child, [
        event(2, 'turn/start', { turn: 1, messageIds: [] }),
        event(3, 'turn/end', { turn: 1, reason: 'completed' }),
      ]);
    }
    t.logged(lead, [
      event(4, 'tool/result', { callId: 'c1', name: 'subagent', isError: false, content: 'ok' }),
      event(5, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    const finished = exporter.getFinishedSpans();
    const parentOf = (name: string) => spanNamed(finished, name).parentSpanContext?.spanId;
    expect(parentOf('invoke_agent a')).toBe(spanNamed(finished, 'execute_tool subagent').spanContext().spanId);
    expect(parentOf('invoke_agent b')).toBe(spanNamed(finished, 'invoke_agent lead').spanContext().spanId);
    expect(reports).toEqual([]);
  });
});
