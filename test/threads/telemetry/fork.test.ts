/**
 * Telemetry of a fork child: its log starts with its parent's completed turns (the seed), which are
 * the parent's work, so the child's spans are its own turns only; with captureContent its requests
 * show the inherited history they sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { scriptedModels, subagentTool } from '../../../src/index.js';
import { subagentCall } from '../../support/fan-out.js';
import { memoryTracing } from '../../support/otel.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const models = scriptedModels({
  id: 'scripted',
  scripts: [
    {
      match: 'warm up',
      turns: [{ text: 'ready' }, { toolCalls: [subagentCall('child task', 'kid')] }, { text: 'forked' }],
    },
    { match: 'child task', turns: [{ text: 'child done' }] },
  ],
});

describe.each(RUNNERS)('telemetry of a fork child (%s runner)', (runner) => {
  it("makes spans of the child's own turn only, whose request sent the inherited history", async () => {
    const { provider, exporter } = memoryTracing();
    brood = makeBrood(runner, { models: [models], telemetry: { tracerProvider: provider, captureContent: true } });
    brood.use(subagentTool({ provider: 'fork' }));
    const lead = await brood.createAgent({ id: 'lead', model: route });
    await lead.run('warm up');
    expect((await lead.run('now fork')).output).toBe('forked');
    const spans = exporter.getFinishedSpans();
    const turns = spans.filter((span) => span.name.startsWith('invoke_agent'));
    expect(turns.map((span) => span.name)).toEqual(['invoke_agent lead', 'invoke_agent kid', 'invoke_agent lead']);
    const child = turns[1]?.spanContext().spanId;
    const childChats = spans.filter((span) => span.name.startsWith('chat') && span.parentSpanContext?.spanId === child);
    expect(spans.filter((span) => span.name.startsWith('chat'))).toHaveLength(4);
    expect(childChats).toHaveLength(1);
    const text = (role: string, content: string) => ({ role, parts: [{ type: 'text', content }] });
    expect(JSON.parse(String(childChats[0]?.attributes['gen_ai.input.messages']))).toEqual([
      text('user', 'warm up'),
      text('assistant', 'ready'),
      text('user', 'child task'),
    ]);
  });
});
