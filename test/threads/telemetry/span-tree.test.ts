/**
 * createBrood `telemetry` end to end: a three-level delegation tree with a background and a failing
 * child becomes GenAI spans whose tree is the session tree, under the host's own request span.
 */
import { context, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/index.js';
import { jobTools, scriptedModels, subagentTool } from '../../../src/index.js';
import { labelledCall } from '../../support/fan-out.js';
import { childrenOf, installContextManager, memoryTracing, parentIdOf, spanNamed } from '../../support/otel.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';
import { until } from '../../support/until.js';

const delegate = labelledCall;

const models = scriptedModels({
  id: 'scripted',
  scripts: [
    {
      match: 'lead task',
      turns: [
        {
          text: 'Splitting.',
          toolCalls: [
            delegate('alpha work'),
            delegate('beta work'),
            delegate('delta work', { run_in_background: true }),
          ],
        },
        { text: 'All done.' },
      ],
    },
    { match: 'alpha work', turns: [{ toolCalls: [delegate('gamma work')] }, { text: 'alpha done' }] },
    { match: 'beta work', turns: [{ finish: 'error' }] },
    { match: 'gamma work', turns: [{ text: 'gamma done' }] },
    { match: 'delta work', turns: [{ text: 'delta done in the background' }] },
  ],
});

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});
beforeAll(installContextManager);

function tracedBrood(runner: (typeof RUNNERS)[number], telemetry: BroodOptions['telemetry']): Brood {
  const b = makeBrood(runner, { models: [models], telemetry });
  b.use(subagentTool({ provider: 'spawn', enableRunInBackground: true }));
  b.use(jobTools());
  return b;
}

const agentSpans = (spans: readonly ReadableSpan[]) => spans.filter((span) => span.name.startsWith('invoke_agent'));

describe.each(RUNNERS)('telemetry spans (%s runner)', (runner) => {
  it('mirrors the session tree: foreground children under their subagent call, the background one linked', async () => {
    const { provider, exporter } = memoryTracing();
    brood = tracedBrood(runner, { tracerProvider: provider });
    const lead = await brood.createAgent({ id: 'lead', model: route });
    const request = provider.getTracer('host').startSpan('POST /work');
    const result = await context.with(trace.setSpan(context.active(), request), () => lead.run('lead task'));
    request.end();
    // The background child's settlement notice gives the lead a second turn: every span ends with it.
    const leadTurns = () => exporter.getFinishedSpans().filter((span) => span.name === 'invoke_agent lead');
    await until(() => leadTurns().length === 2);
    const spans = exporter.getFinishedSpans();
    const byAgent = new Map(agentSpans(spans).map((span) => [span.attributes['gen_ai.agent.id'], span]));

    const leadTurn = leadTurns().find((span) => span.attributes['brood.turn'] === 1);
    if (leadTurn === undefined) throw new Error('no span of the lead turn');
    expect(parentIdOf(leadTurn)).toBe(request.spanContext().spanId);
    expect(leadTurn.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(leadTurn.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 'lead',
      'brood.depth': 0,
      'brood.delegation.mode': 'top',
      'brood.stop_reason': 'completed',
    });

    const calls = childrenOf(spans, leadTurn).filter((span) => span.name === 'execute_tool subagent');
    expect(calls).toHaveLength(3);
    const alpha = spanNamed(spans, 'invoke_agent alpha');
    const beta = spanNamed(spans, 'invoke_agent beta');
    const gamma = spanNamed(spans, 'invoke_agent gamma');
    const delta = spanNamed(spans, 'invoke_agent delta');
    for (const child of [alpha, beta]) {
      const call = calls.find((span) => span.spanContext().spanId === parentIdOf(child));
      expect(call?.attributes['gen_ai.tool.name']).toBe('subagent');
      expect(child.attributes).toMatchObject({
        'brood.depth': 1,
        'brood.parent.id': 'lead',
        'brood.delegation.mode': 'foreground',
        'brood.runner': 'spawn',
        'brood.driver': runner,
      });
    }
    // gamma runs under alpha's own subagent call, a level down.
    const alphaCall = childrenOf(spans, alpha).find((span) => span.name === 'execute_tool subagent');
    expect(parentIdOf(gamma)).toBe(alphaCall?.spanContext().spanId);
    expect(gamma.attributes['brood.depth']).toBe(2);

    // The failing child: its turn span and its model request are errors, and so is the call that ran it.
    expect(beta.status.code).toBe(2);
    expect(beta.attributes['error.type']).toBe('error');
    expect(childrenOf(spans, beta).find((span) => span.name.startsWith('chat '))?.status.code).toBe(2);

    // The background child: a trace of its own, linked to the call that started it.
    expect(delta.attributes['brood.delegation.mode']).toBe('background');
    expect(parentIdOf(delta)).toBeUndefined();
    expect(delta.spanContext().traceId).not.toBe(request.spanContext().traceId);
    const startedBy = calls.find((span) => span.spanContext().spanId === delta.links[0]?.context.spanId);
    expect(startedBy).toBeDefined();

    // Every agent of the session tree has a span, and every chat span sits under its agent's turn.
    expect([...byAgent.keys()].sort()).toHaveLength(5);
    for (const chat of spans.filter((span) => span.name === 'chat default' || span.name.startsWith('chat '))) {
      expect(agentSpans(spans).some((turn) => turn.spanContext().spanId === parentIdOf(chat))).toBe(true);
      expect(chat.attributes['gen_ai.provider.name']).toBe('scripted');
      expect(chat.kind).toBe(2);
    }
    expect(result.usageTree.total).toEqual(result.usage);
  });
});
