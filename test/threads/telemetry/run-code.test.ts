/** createBrood telemetry with Code Mode: the calls a run_code program makes are children of its span. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels } from '../../../src/index.js';
import { collectDiagnostics } from '../../support/diagnostics.js';
import { childrenOf, memoryTracing, spanNamed } from '../../support/otel.js';
import { route } from '../../support/route.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

describe('telemetry and run_code', () => {
  it("nests each call from inside a program under the program's execute_tool run_code span", async () => {
    const { provider, exporter } = memoryTracing();
    const reported = collectDiagnostics();
    const code =
      'const a = await tools.lookup({ n: 1 }); const b = await tools.lookup({ n: -1 }).catch(() => 0); return a;';
    brood = createBrood({
      onDiagnostic: reported.onDiagnostic,
      codeMode: 'code',
      pool: { threads: 1 },
      telemetry: { tracerProvider: provider },
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'compute',
              turns: [{ toolCalls: [{ name: 'run_code', arguments: { description: 'x', code } }] }, { text: 'done' }],
            },
          ],
        }),
      ],
    });
    brood.tools.register(
      defineTool({
        name: 'lookup',
        description: 'doubles a positive n',
        parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        execute: ({ n }: { n: number }) => {
          if (n < 0) throw new Error('negative');
          return n * 2;
        },
      }),
    );
    const agent = await brood.createAgent({ id: 'coder', model: route });
    expect((await agent.run('compute')).stopReason).toBe('completed');
    const spans = exporter.getFinishedSpans();
    const program = spanNamed(spans, 'execute_tool run_code');
    const calls = childrenOf(spans, program);
    expect(calls.map((span) => span.name)).toEqual(['execute_tool lookup', 'execute_tool lookup']);
    expect(calls.map((span) => span.status.code)).toEqual([0, 2]);
    expect(program.parentSpanContext?.spanId).toBe(spanNamed(spans, 'invoke_agent coder').spanContext().spanId);
    // The second lookup's throw, which the program caught, still reached the host.
    expect(reported.messages.length).toBeGreaterThanOrEqual(1);
  });
});
