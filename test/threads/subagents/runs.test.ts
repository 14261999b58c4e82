/** SPEC §9 "Results" and "Lifecycle events", §7.3 / §7.5 (cancel and usage roll-up through foreground children). */
import { afterEach, describe, expect, it } from 'vitest';
import type { SubagentResult } from '../../../src/index.js';
import { defineTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { deferred } from '../../support/deferred.js';
import { collectDiagnostics } from '../../support/diagnostics.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { type Harness, harness, type Script, startChild } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.brood.close();
  h = undefined;
});

const CHILD_SCRIPTS: Script[] = [
  { match: 'child completed', turns: [{ text: 'all good' }] },
  { match: 'child maxtok', turns: [{ finish: 'max-tokens', text: 'cut' }] },
  { match: 'child refusal', turns: [{ finish: 'refusal', text: 'no' }] },
  { match: 'child error', turns: [{ finish: 'error' }] },
  { match: 'child slow', latencyMs: 60_000, turns: [{ text: 'too late' }] },
  {
    match: 'child tools',
    turns: [{ toolCalls: [{ name: 'echo', arguments: { v: 'x' } }] }, { text: 'tools done {{results}}' }],
  },
];

/** A global delegation tool: every call starts a foreground spawn child of the calling agent. */
function withDelegate(harnessed: Harness, extra: Record<string, unknown> = {}): void {
  harnessed.brood.tools.register(
    defineTool({
      name: 'delegate',
      description: 'delegate',
      parameters: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
      concurrencySafe: true,
      execute: async ({ prompt }: { prompt: string }, ctx) => {
        const run = await harnessed.brood.subagents.start('spawn', {
          parent: ctx.agent!,
          prompt,
          signal: ctx.signal,
          ...extra,
        });
        try {
          const result = await run.result;
          if (result.stopReason !== 'completed') throw new Error(`child ${result.stopReason}`);
          return result.output;
        } finally {
          await run.dispose();
        }
      },
    }),
  );
  harnessed.brood.tools.register(
    defineTool({
      name: 'echo',
      description: 'echo',
      parameters: { type: 'object', properties: { v: { type: 'string' } } },
      concurrencySafe: true,
      execute: ({ v }: { v?: string }) => `echo ${v}`,
    }),
  );
}

describe('one-shot runs', () => {
  it('result resolves (never rejects) for every stop reason; one end per run, emitted before result settles', async () => {
    h = harness({ scripts: CHILD_SCRIPTS });
    const parent = await h.brood.createAgent({ model: route });
    const cases: [string, SubagentResult['stopReason']][] = [
      ['child completed', 'completed'],
      ['child maxtok', 'max-tokens'],
      ['child refusal', 'refusal'],
      ['child error', 'error'],
      ['child slow', 'aborted'],
    ];
    const seen: [string, string, boolean][] = [];
    for (const [prompt, expected] of cases) {
      const controller = new AbortController();
      const run = await h.brood.subagents.start('spawn', { parent, prompt, signal: controller.signal, label: prompt });
      // start is emitted before start() resolves.
      expect(h.starts.at(-1)).toMatchObject({ provider: 'spawn', id: run.id, parentId: parent.id, depth: 1 });
      if (expected === 'aborted') {
        await h.tap.waitFor(run.id, 'model/request');
        controller.abort();
      }
      const result = await run.result.then((r) => {
        seen.push([prompt, r.stopReason, h!.ends.some((e) => e.id === run.id)]);
        return r;
      });
      expect(result.stopReason).toBe(expected);
      if (expected === 'completed') expect(result.output).toBe('all good');
      if (expected === 'error')
        expect(typeof result.diagnostic === 'string' || result.diagnostic === undefined).toBe(true);
      // dispose is idempotent.
      await run.dispose();
      await run.dispose();
    }
    expect(seen).toEqual(cases.map(([prompt, reason]) => [prompt, reason, true]));
    expect(h.starts).toHaveLength(cases.length);
    expect(h.ends.map((e) => e.stopReason)).toEqual(cases.map(([, reason]) => reason));
    for (let i = 0; i < cases.length; i++) {
      expect(h.ends[i]).toMatchObject({ runId: h.starts[i]!.runId, provider: 'spawn', id: h.starts[i]!.id });
    }
    expect(new Set(h.starts.map((s) => s.runId)).size).toBe(cases.length);
    expect(h.starts.every((s) => s.runId !== s.id)).toBe(true);
    expect(h.ends.find((e) => e.stopReason === 'completed')?.output).toBe('all good');
    // The parent keeps working.
    expect((await parent.run('child completed')).stopReason).toBe('completed');
  });

  it('dispose before the child finished cancels it; result still resolves aborted with one end event', async () => {
    h = harness({ scripts: CHILD_SCRIPTS });
    const parent = await h.brood.createAgent({ model: route });
    const run = await startChild(h, parent, 'child slow');
    await h.tap.waitFor(run.id, 'model/request');
    await Promise.all([run.dispose(), run.dispose()]);
    expect((await run.result).stopReason).toBe('aborted');
    expect(h.ends.filter((e) => e.id === run.id)).toHaveLength(1);
  });

  it("cancelling the parent's turn cancels its foreground children", async () => {
    const reported = collectDiagnostics();
    h = harness({
      onDiagnostic: reported.onDiagnostic,
      scripts: [
        ...CHILD_SCRIPTS,
        {
          match: 'parent go',
          turns: [
            {
              toolCalls: [
                { name: 'delegate', arguments: { prompt: 'child slow' } },
                { name: 'delegate', arguments: { prompt: 'child slow 2' } },
              ],
            },
            { text: 'unreachable' },
          ],
        },
      ],
    });
    withDelegate(h);
    const parent = await h.brood.createAgent({ model: route });
    const bothRunning = deferred<string[]>();
    const ids: string[] = [];
    h.brood.subagents.on('start', (info: { id: string }) => {
      ids.push(info.id);
      if (ids.length === 2) bothRunning.resolve([...ids]);
    });
    const controller = new AbortController();
    const turn = parent.run('parent go', { signal: controller.signal });
    const children = await bothRunning.promise;
    await Promise.all(children.map((id) => h!.tap.waitFor(id, 'model/request')));
    controller.abort();
    const result = await turn;
    expect(result.stopReason).toBe('aborted');
    const ends = await Promise.all(children.map((id) => h!.endOf(id)));
    expect(ends.map((e) => e.stopReason)).toEqual(['aborted', 'aborted']);
    for (const id of children) {
      const turnEnd = ofType(await h.events(id), 'turn/end');
      expect(turnEnd.map((e) => e.data.reason)).toEqual(['aborted']);
    }
    // `delegate` throws for a child that did not complete: the host is told of that throw.
    expect(reported.messages.length).toBeGreaterThanOrEqual(1);
  });

  it('agent.cancel() on the parent also cancels a foreground child', async () => {
    const reported = collectDiagnostics();
    h = harness({
      onDiagnostic: reported.onDiagnostic,
      scripts: [
        ...CHILD_SCRIPTS,
        {
          match: 'parent go',
          turns: [{ toolCalls: [{ name: 'delegate', arguments: { prompt: 'child slow' } }] }, { text: 'x' }],
        },
      ],
    });
    withDelegate(h);
    const parent = await h.brood.createAgent({ model: route });
    const started = deferred<string>();
    h.brood.subagents.on('start', (info: { id: string }) => started.resolve(info.id));
    const turn = parent.run('parent go');
    const childId = await started.promise;
    await h.tap.waitFor(childId, 'model/request');
    parent.cancel();
    expect((await turn).stopReason).toBe('aborted');
    expect((await h.endOf(childId)).stopReason).toBe('aborted');
    // `delegate` throws for a child that did not complete: the host is told of that throw.
    expect(reported.messages.length).toBeGreaterThanOrEqual(1);
  });

  it("foreground children's usage is rolled into the parent's TurnResult exactly once", async () => {
    h = harness({
      scripts: [
        ...CHILD_SCRIPTS,
        {
          match: 'parent go',
          turns: [
            {
              toolCalls: [
                { name: 'delegate', arguments: { prompt: 'child tools' } },
                { name: 'delegate', arguments: { prompt: 'child completed' } },
              ],
            },
            { text: 'parent done: {{results}}' },
          ],
        },
      ],
    });
    withDelegate(h);
    const parent = await h.brood.createAgent({ model: route });
    const result = await parent.run('parent go');
    expect(result.stopReason).toBe('completed');
    const usageOf = async (id: string) =>
      ofType(await h!.events(id), 'assistant/message').reduce(
        (sum, e) => {
          const usage = e.data.usage as { inputTokens: number; outputTokens: number } | undefined;
          return {
            inputTokens: sum.inputTokens + (usage?.inputTokens ?? 0),
            outputTokens: sum.outputTokens + (usage?.outputTokens ?? 0),
          };
        },
        { inputTokens: 0, outputTokens: 0 },
      );
    const own = await usageOf(parent.id);
    const childIds = h.starts.map((s) => s.id);
    expect(childIds).toHaveLength(2);
    const children = await Promise.all(childIds.map(usageOf));
    expect(own.inputTokens).toBeGreaterThan(0);
    expect(children.every((c) => c.inputTokens > 0 && c.outputTokens > 0)).toBe(true);
    expect(result.usage).toEqual({
      inputTokens: own.inputTokens + children[0]!.inputTokens + children[1]!.inputTokens,
      outputTokens: own.outputTokens + children[0]!.outputTokens + children[1]!.outputTokens,
    });
    // A later turn of the parent starts from zero again (no double counting).
    const again = await parent.run('child completed');
    const ownAll = await usageOf(parent.id);
    expect(again.usage).toEqual({
      inputTokens: ownAll.inputTokens - own.inputTokens,
      outputTokens: ownAll.outputTokens - own.outputTokens,
    });
  });

  it('outputSchema: the last valid structured_output call is the structured value; none valid → error', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
      additionalProperties: false,
    };
    h = harness({
      scripts: [
        {
          match: 'child struct',
          turns: [
            { toolCalls: [{ name: 'structured_output', arguments: { answer: 'first' } }] },
            { toolCalls: [{ name: 'structured_output', arguments: { answer: 'second' } }] },
            { toolCalls: [{ name: 'structured_output', arguments: { answer: 7 } }] },
            { text: 'finished' },
          ],
        },
        {
          match: 'child bad',
          turns: [
            { toolCalls: [{ name: 'structured_output', arguments: { wrong: true } }] },
            { text: 'finished anyway' },
          ],
        },
        { match: 'child none', turns: [{ text: 'no structure' }] },
      ],
    });
    const parent = await h.brood.createAgent({ model: route });
    const good = await startChild(h, parent, 'child struct', { outputSchema: schema });
    const goodResult = await good.result;
    expect(goodResult).toMatchObject({ stopReason: 'completed', structured: { answer: 'second' }, output: 'finished' });
    const results = ofType(await h.events(good.id), 'tool/result').map((e) => [
      e.data.isError,
      e.data.content,
      e.data.errorCode ?? null,
    ]);
    expect(results[0]).toEqual([false, 'ok', null]);
    expect(results[2]?.[2]).toBe('INVALID_ARGS');
    expect((await h.tap.waitFor(good.id, 'model/request')).data.tools).toEqual(['structured_output']);

    for (const prompt of ['child bad', 'child none']) {
      const run = await startChild(h, parent, prompt, { outputSchema: schema });
      const result = await run.result;
      expect([prompt, result.stopReason, result.structured]).toEqual([prompt, 'error', undefined]);
      expect(result.diagnostic).toBe('the child finished without a valid structured_output call');
      expect((await h.endOf(run.id)).stopReason).toBe('error');
      await run.dispose();
    }
    await good.dispose();
    // structured_output is the child's own tool: never in the global or parent view.
    expect(h.brood.tools.view().names).toEqual([]);
  });

  it("outputSchema: structured_output is a turn tool of the child's prompt turn, never in the child's view()", async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    h = harness({
      scripts: [
        {
          match: 'child peeks',
          turns: [
            { toolCalls: [{ name: 'peek', arguments: {} }] },
            { toolCalls: [{ name: 'structured_output', arguments: { answer: 'seen' } }] },
            { text: 'done' },
          ],
        },
      ],
    });
    const seenInView: string[][] = [];
    h.brood.tools.register(
      defineTool({
        name: 'peek',
        description: "records the calling agent's view",
        parameters: { type: 'object' },
        execute: (_args, ctx) => {
          seenInView.push(ctx.agent?.tools.view().names ?? ['no agent']);
          return 'peeked';
        },
      }),
    );
    const parent = await h.brood.createAgent({ model: route });
    const run = await startChild(h, parent, 'child peeks', { outputSchema: schema });
    expect(await run.result).toMatchObject({ stopReason: 'completed', structured: { answer: 'seen' } });
    expect(seenInView).toEqual([['peek']]);
    const events = await h.events(run.id);
    expect(ofType(events, 'model/request').map((e) => e.data.tools)).toEqual([
      ['peek', 'structured_output'],
      ['peek', 'structured_output'],
      ['peek', 'structured_output'],
    ]);
    expect(ofType(events, 'tool/call').map((e) => e.data.name)).toEqual(['peek', 'structured_output']);
    await run.dispose();
  });

  it('outputSchema: a schema no tool can take is INVALID_ARGS before anything is created', async () => {
    h = harness();
    const parent = await h.brood.createAgent({ model: route });
    const before = await h.headers();
    await expectCode(startChild(h, parent, 'never runs', { outputSchema: 'not a schema' }), 'INVALID_ARGS');
    expect(await h.headers()).toEqual(before);
    expect(h.liveAgents()).toBe(1);
    expect(h.starts).toEqual([]);
  });
});
