/**
 * createBrood telemetry with the queue runner: the activation's claim carries the turn's trace context
 * through Redis, so the model request a `brood host` makes joins the parent's trace, and a host run
 * with `--telemetry` (its own SDK registered by `node --import`) adds its activation span to it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrood } from '../../src/brood.js';
import { openAICompatible } from '../../src/models/openai.js';
import { queueRunner } from '../../src/queue/config.js';
import { type LoopbackModel, startLoopbackModel } from '../support/loopback-model.js';
import { memoryTracing, spanNamed } from '../support/otel.js';
import { until } from '../support/until.js';
import { type HostProcess, RedisServer, redisAvailable, startHost, stopHost } from './redis-harness.js';

const SETUP = pathToFileURL(fileURLToPath(new URL('./fixtures/otel-host-setup.mjs', import.meta.url))).href;

describe.runIf(redisAvailable())('telemetry with the queue runner', () => {
  let redis: RedisServer;
  let host: HostProcess;
  let model: LoopbackModel;
  let dir: string;
  let hostSpans: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'brood-otel-host-'));
    hostSpans = join(dir, 'spans.jsonl');
    redis = await RedisServer.start();
    host = await startHost(redis.url, ['--telemetry'], {
      NODE_OPTIONS: `--import ${SETUP}`,
      BROOD_TEST_SPANS: hostSpans,
    });
    model = await startLoopbackModel({ answer: () => 'answered on a host' });
  });
  afterAll(async () => {
    await stopHost(host);
    await redis?.dispose();
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
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
      // The host's own tracing continues the trace: its activation span is a child of the turn's span.
      const read = () =>
        existsSync(hostSpans)
          ? readFileSync(hostSpans, 'utf8')
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line) as { name: string; traceId: string; parentSpanId?: string })
          : [];
      await until(() => read().length > 0);
      expect(read()).toEqual([
        expect.objectContaining({ name: 'brood.host activation queued', traceId, parentSpanId: spanId }),
      ]);
    } finally {
      await brood.close();
    }
  });

  it('with captureContent, a chat span of a request a host made holds the history that request sent', async () => {
    const { provider, exporter } = memoryTracing();
    const brood = createBrood({
      runner: queueRunner({ connection: redis.url }),
      models: [openAICompatible({ id: 'loop', baseURL: model.baseURL, models: ['m'], retry: { retries: 0 } })],
      telemetry: { tracerProvider: provider, captureContent: true },
    });
    try {
      const agent = await brood.createAgent({ id: 'recorded', model: { provider: 'loop', model: 'm' } });
      await agent.run('first question');
      await agent.run('second question');
      const chats = exporter.getFinishedSpans().filter((span) => span.name === 'chat m');
      const text = (role: string, content: string) => ({ role, parts: [{ type: 'text', content }] });
      expect(JSON.parse(String(chats[1]?.attributes['gen_ai.input.messages']))).toEqual([
        text('user', 'first question'),
        text('assistant', 'answered on a host'),
        text('user', 'second question'),
      ]);
    } finally {
      await brood.close();
    }
  });
});
