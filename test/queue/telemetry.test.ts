/**
 * createBrood telemetry with the queue runner: the activation's claim carries the turn's trace context
 * through Redis, so the model request a `brood host` makes joins the parent's trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrood } from '../../src/brood.js';
import { openAICompatible } from '../../src/models/openai.js';
import { queueRunner } from '../../src/queue/config.js';
import { startLoopbackModel, type LoopbackModel } from '../support/loopback-model.js';
import { memoryTracing, spanNamed } from '../support/otel.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

describe.runIf(redisAvailable())('telemetry with the queue runner', () => {
  let redis: RedisServer;
  let host: HostProcess;
  let model: LoopbackModel;

  beforeAll(async () => {
    redis = await RedisServer.start();
    host = await startHost(redis.url);
    model = await startLoopbackModel({ answer: () => 'answered on a host' });
  });
  afterAll(async () => {
    await stopHost(host);
    await redis?.dispose();
    await model?.close();
  });

  it("a host's model request carries the parent's turn span as its traceparent", async () => {
    const { provider, exporter } = memoryTracing();
    const brood = createBrood({
      runner: queueRunner({ connection: redis.url }),
      models: [openAICompatible({ id: 'loop', baseURL: model.baseURL, models: ['m'], retry: { retries: 0 } })],
      telemetry: { tracerProvider: provider },
    });
    try {
      const agent = await brood.createAgent({ id: 'queued', model: { provider: 'loop', model: 'm' } });
      expect((await agent.run('hi')).output).toBe('answered on a host');
      const turn = spanNamed(exporter.getFinishedSpans(), 'invoke_agent queued');
      const { traceId, spanId } = turn.spanContext();
      expect(model.requests[0]?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
      expect(turn.attributes['brood.driver']).toBe('queue');
      expect(spanNamed(exporter.getFinishedSpans(), 'chat m').parentSpanContext?.spanId).toBe(spanId);
    } finally {
      await brood.close();
    }
  });
});
