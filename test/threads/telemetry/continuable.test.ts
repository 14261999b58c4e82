/**
 * A continuable child's runs start traces of their own, linked to the tool call that started the
 * child: the call is read at the start's synchronous entry, inside the delegation tool's execute().
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { scriptedModels, subagentTool } from '../../../src/index.js';
import { subagentCall } from '../../support/fan-out.js';
import { memoryTracing, parentIdOf, spanNamed } from '../../support/otel.js';
import { route } from '../../support/route.js';
import { workerBrood } from '../../support/runtime.js';
import { until } from '../../support/until.js';

const models = scriptedModels({
  id: 'scripted',
  scripts: [
    {
      match: 'boss',
      turns: [{ toolCalls: [subagentCall('worker child', 'worker')] }, { text: 'delegated' }, { text: 'noted' }],
    },
    { match: 'worker child', turns: [{ text: 'first pass' }] },
  ],
});

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

describe('telemetry of a continuable child', () => {
  it('links its run to the subagent call that started it, in a trace of its own', async () => {
    const { provider, exporter } = memoryTracing();
    brood = workerBrood({ models: [models], telemetry: { tracerProvider: provider } });
    brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable' }));
    const lead = await brood.createAgent({ model: route });
    await lead.run('boss');
    await until(() => exporter.getFinishedSpans().some((span) => span.name === 'invoke_agent worker'));
    const spans = exporter.getFinishedSpans();
    const worker = spanNamed(spans, 'invoke_agent worker');
    const call = spanNamed(spans, 'execute_tool subagent');
    expect(worker.attributes['brood.delegation.mode']).toBe('continuable');
    expect(parentIdOf(worker)).toBeUndefined();
    expect(worker.links.map((link) => link.context.spanId)).toEqual([call.spanContext().spanId]);
  });
});
