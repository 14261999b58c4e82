/** createBrood telemetry with an ACP child: the prompt carries the child's turn context in `_meta`. */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryTracing, spanNamed } from '../../support/otel.js';
import { type AcpHarness, acpHarness, fixtureOptions, signal } from './helpers.js';

let h: AcpHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('ACP children under telemetry', () => {
  it("sends the child's traceparent in the prompt's _meta, and the child's turn is an invoke_agent span", async () => {
    const { provider, exporter } = memoryTracing();
    h = await acpHarness(fixtureOptions(), { telemetry: { tracerProvider: provider } });
    const run = await h.brood.subagents.start('acp', {
      parent: h.lead,
      prompt: 'trace-meta',
      label: 'acp-child',
      signal: signal(),
    });
    const result = await run.result;
    const turn = spanNamed(exporter.getFinishedSpans(), 'invoke_agent acp-child');
    const { traceId, spanId } = turn.spanContext();
    expect(result.output).toContain(`traceparent: 00-${traceId}-${spanId}-01`);
    expect(turn.attributes).toMatchObject({ 'brood.runner': 'acp', 'brood.driver': 'external' });
  });
});
