/**
 * Telemetry over real HTTP: model requests carry the turn's W3C trace context to a loopback server,
 * chat spans name the server, metrics are recorded, and a tracer that throws never breaks a turn.
 */
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/index.js';
import { openAICompatible } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { memoryTracing, spanNamed } from '../../support/otel.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
let server: LoopbackModel | undefined;
afterEach(async () => {
  await brood?.close();
  await server?.close();
  brood = undefined;
  server = undefined;
});

async function loopbackBrood(runner: (typeof RUNNERS)[number], options: BroodOptions): Promise<Brood> {
  server = await startLoopbackModel({ answer: () => 'hello from the loopback model' });
  const models = [openAICompatible({ id: 'loop', baseURL: server.baseURL, models: ['m'], retry: { retries: 0 } })];
  brood = makeBrood(runner, { models, ...options });
  return brood;
}

const route = { provider: 'loop', model: 'm' };

describe.each(RUNNERS)('telemetry over HTTP (%s runner)', (runner) => {
  it("sends the turn's traceparent with each model request and names the server on the chat span", async () => {
    const { provider, exporter } = memoryTracing();
    const b = await loopbackBrood(runner, { telemetry: { tracerProvider: provider } });
    const agent = await b.createAgent({ id: 'solo', model: route });
    await agent.run('hi');
    const spans = exporter.getFinishedSpans();
    const turn = spanNamed(spans, 'invoke_agent solo');
    const chat = spanNamed(spans, 'chat m');
    const { traceId, spanId } = turn.spanContext();
    expect(server?.requests[0]?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
    expect(chat.attributes).toMatchObject({
      'gen_ai.provider.name': 'loop',
      'gen_ai.request.model': 'm',
      'gen_ai.response.model': 'm',
      'gen_ai.response.finish_reasons': ['stop'],
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(server?.baseURL ?? '').port),
    });
    expect(chat.attributes['gen_ai.usage.output_tokens']).toEqual(expect.any(Number));
    expect(chat.attributes['gen_ai.output.messages']).toBeUndefined();
  });

  it('sends no trace context with propagate: false, and captures content when asked', async () => {
    const { provider, exporter } = memoryTracing();
    const b = await loopbackBrood(runner, {
      telemetry: { tracerProvider: provider, propagate: false, captureContent: true },
    });
    const agent = await b.createAgent({ id: 'solo', model: route });
    await agent.run('hi');
    expect(server?.requests[0]?.headers.traceparent).toBeUndefined();
    const answer = JSON.parse(
      String(spanNamed(exporter.getFinishedSpans(), 'chat m').attributes['gen_ai.output.messages']),
    );
    expect(answer).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'hello from the loopback model' }], finish_reason: 'stop' },
    ]);
  });
});

describe('telemetry metrics and faults', () => {
  it('records the GenAI duration and token usage histograms', async () => {
    const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 60_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const { provider } = memoryTracing();
    const b = await loopbackBrood('inline', {
      telemetry: { tracerProvider: provider, meter: meterProvider.getMeter('host') },
    });
    await (await b.createAgent({ model: route })).run('hi');
    await reader.forceFlush();
    const names = metrics
      .getMetrics()
      .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics))
      .map((metric) => metric.descriptor.name);
    expect(names).toEqual(expect.arrayContaining(['gen_ai.client.operation.duration', 'gen_ai.client.token.usage']));
    await meterProvider.shutdown();
  });

  it('a tracer that throws leaves the turn alone and goes to onDiagnostic', async () => {
    const diagnostics: string[] = [];
    const tracer = {
      startSpan(): never {
        throw new Error('exporter exploded');
      },
    };
    const b = await loopbackBrood('inline', { telemetry: { tracer }, onDiagnostic: (m) => diagnostics.push(m) });
    const result = await (await b.createAgent({ model: route })).run('hi');
    expect(result.stopReason).toBe('completed');
    expect(result.output).toBe('hello from the loopback model');
    expect(diagnostics.some((message) => message.includes('exporter exploded'))).toBe(true);
  });

  it('refuses a telemetry option that is not one', async () => {
    await expectCode(loopbackBrood('inline', { telemetry: { tracer: {} as never } }), 'INVALID_CONFIG');
    const { provider } = memoryTracing();
    const tracer = provider.getTracer('x');
    await expectCode(loopbackBrood('inline', { telemetry: { tracer, tracerProvider: provider } }), 'INVALID_CONFIG');
  });
});
