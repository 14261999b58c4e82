/** The contexts brood hands the tracer: a span over a parent context, read and written like the api's. */
import * as api from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { spanSetter } from '../../../src/telemetry/context.js';
import { memoryTracing } from '../../support/otel.js';

const withSpan = spanSetter(api);
const BAGGAGE = api.createContextKey('test baggage');

describe('brood parent contexts', () => {
  it('answer the span they hold and their parent for every other key', () => {
    const span = api.trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 });
    const parent = api.ROOT_CONTEXT.setValue(BAGGAGE, 'from the host');
    const context = withSpan(parent, span);
    expect(api.trace.getSpan(context)).toBe(span);
    expect(context.getValue(BAGGAGE)).toBe('from the host');
    expect(api.trace.getSpan(parent)).toBeUndefined();
  });

  it('written to, become the api context with the same span and values', () => {
    const span = api.trace.wrapSpanContext({ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 });
    const context = withSpan(api.ROOT_CONTEXT.setValue(BAGGAGE, 1), span);
    const other = api.createContextKey('other');
    const written = context.setValue(other, 2);
    expect(api.trace.getSpan(written)).toBe(span);
    expect([written.getValue(BAGGAGE), written.getValue(other)]).toEqual([1, 2]);
    const without = context.deleteValue(BAGGAGE);
    expect(api.trace.getSpan(without)).toBe(span);
    expect(without.getValue(BAGGAGE)).toBeUndefined();
    expect(api.trace.getSpan(api.trace.deleteSpan(context))).toBeUndefined();
  });

  it("make the SDK's spans children of the span they hold", () => {
    const { provider, exporter } = memoryTracing();
    const tracer = provider.getTracer('t');
    const parent = tracer.startSpan('parent');
    tracer.startSpan('child', {}, withSpan(api.ROOT_CONTEXT, parent)).end();
    parent.end();
    const [child] = exporter.getFinishedSpans();
    expect(child?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(child?.spanContext().traceId).toBe(parent.spanContext().traceId);
  });
});
