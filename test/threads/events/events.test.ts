/** SPEC §15 event stream end to end: real worker threads, scripted models, a 3-level tree. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodEvent } from '../../../src/index.js';
import { createBrood, jobTools, moduleAdapter, scriptedModels, subagentTool } from '../../../src/index.js';
import { runtimeOf } from '../../../src/runtime/plugin-access.js';
import { route } from '../../support/route.js';

const call = (prompt: string, extra: Record<string, unknown> = {}) => ({
  name: 'subagent',
  arguments: { description: `task ${prompt}`, prompt, ...extra },
});

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** lead → (child A → grandchild, child B) with A and B running in parallel. */
function treeBrood(runner: 'worker' | 'inline' = 'worker'): Brood {
  const b = createBrood({
    runner,
    pool: { threads: 2 },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'lead task',
            turns: [
              { text: 'Splitting the work now.', toolCalls: [call('alpha work'), call('beta work')] },
              { text: 'All done: {{results}}' },
            ],
          },
          {
            match: 'alpha work',
            latencyMs: 30,
            turns: [{ toolCalls: [call('gamma work')] }, { text: 'alpha says {{results}}' }],
          },
          { match: 'beta work', latencyMs: 10, turns: [{ text: 'beta finished its part quickly' }] },
          { match: 'gamma work', latencyMs: 10, turns: [{ text: 'gamma reporting from depth two' }] },
        ],
      }),
    ],
  });
  b.use(subagentTool({ provider: 'spawn' }));
  return b;
}

/** Reads a stream into an array until `stop` says so (checked after each event). */
async function collect(
  stream: AsyncIterable<BroodEvent>,
  stop: (events: BroodEvent[]) => boolean,
): Promise<BroodEvent[]> {
  const events: BroodEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    if (stop(events)) break;
  }
  return events;
}

const leadEnded = (leadId: string) => (events: BroodEvent[]) =>
  events.some((e) => e.type === 'turn-end' && e.agentId === leadId);

function checkAgentOrder(events: BroodEvent[], agentId: string): void {
  const own = events.filter((e) => e.agentId === agentId && e.type !== 'subagent-start' && e.type !== 'subagent-end');
  const kinds = own.map((e) => e.type);
  expect(kinds[0]).toBe('turn-start');
  expect(kinds.at(-1)).toBe('turn-end');
  // Each step: deltas, then its assistant-message, then its tool events.
  let phase = 0; // 0 = deltas allowed, 1 = after assistant-message (tools allowed)
  for (const kind of kinds.slice(1, -1)) {
    if (kind === 'text-delta') {
      expect(phase === 0 || phase === 1).toBe(true);
      phase = 0;
    } else if (kind === 'assistant-message') phase = 1;
    else expect(['tool-start', 'tool-end']).toContain(kind);
  }
  for (const event of own) expect(event.time).toBeGreaterThan(0);
}

describe('brood.events(): a 3-level tree with parallel children', () => {
  it('delivers every agent in order, children nested between the parent subagent-start and subagent-end', async () => {
    brood = treeBrood();
    const stream = brood.events();
    const lead = await brood.createAgent({ model: route });
    const result = lead.run('lead task');
    const events = await collect(stream, leadEnded(lead.id));
    expect((await result).stopReason).toBe('completed');

    const starts = events.filter(
      (e): e is Extract<BroodEvent, { type: 'subagent-start' }> => e.type === 'subagent-start',
    );
    expect(starts).toHaveLength(3);
    const agents = new Set(events.map((e) => e.agentId));
    expect(agents.size).toBe(4);
    for (const id of agents) checkAgentOrder(events, id);

    for (const start of starts) {
      expect(start).toMatchObject({ mode: 'foreground', provider: 'spawn' });
      const from = events.indexOf(start);
      const end = events.findIndex((e) => e.type === 'subagent-end' && e.childId === start.childId);
      expect(end).toBeGreaterThan(from);
      expect(events[end]).toMatchObject({ agentId: start.agentId, stopReason: 'completed' });
      const childIdx = events.flatMap((e, i) => (e.agentId === start.childId ? [i] : []));
      expect(childIdx.length).toBeGreaterThan(0);
      expect(Math.min(...childIdx)).toBeGreaterThan(from);
      expect(Math.max(...childIdx)).toBeLessThan(end);
      // A child's own events say who its parent is and how deep it sits.
      const first = events[childIdx[0]!]!;
      expect(first.parentId).toBe(start.agentId);
      expect(first.depth).toBe(start.depth + 1);
    }
    const depths = new Set(events.filter((e) => e.type === 'turn-start').map((e) => e.depth));
    expect(depths).toEqual(new Set([0, 1, 2]));
    // The two siblings overlap: beta's run starts before alpha's ends.
    const [alpha, beta] = starts.filter((s) => s.agentId === lead.id);
    const alphaEnd = events.findIndex((e) => e.type === 'subagent-end' && e.childId === alpha!.childId);
    expect(events.indexOf(beta!)).toBeLessThan(alphaEnd);
  });

  it('text deltas are word-sized and join to the assistant text; tool events carry parsed args and the results', async () => {
    brood = treeBrood();
    const stream = brood.events();
    const lead = await brood.createAgent({ model: route });
    void lead.run('lead task');
    const events = await collect(stream, leadEnded(lead.id));
    const leadEvents = events.filter((e) => e.agentId === lead.id);
    const firstMessage = leadEvents.find((e) => e.type === 'assistant-message')!;
    const deltas = leadEvents.slice(0, leadEvents.indexOf(firstMessage)).filter((e) => e.type === 'text-delta');
    expect(deltas.map((e) => (e.type === 'text-delta' ? e.delta : ''))).toEqual([
      'Splitting ',
      'the ',
      'work ',
      'now.',
    ]);
    expect(firstMessage).toMatchObject({
      turn: 1,
      text: 'Splitting the work now.',
      finish: 'tool-calls',
      toolCalls: [
        { id: 'call_0_0', name: 'subagent' },
        { id: 'call_0_1', name: 'subagent' },
      ],
    });
    const toolStart = leadEvents.find((e) => e.type === 'tool-start');
    expect(toolStart).toMatchObject({
      turn: 1,
      callId: 'call_0_0',
      name: 'subagent',
      args: { description: 'task alpha work', prompt: 'alpha work' },
    });
    const toolEnds = leadEvents.filter((e) => e.type === 'tool-end');
    expect(toolEnds.map((e) => e.type === 'tool-end' && [e.callId, e.isError])).toEqual([
      ['call_0_0', false],
      ['call_0_1', false],
    ]);
    const turnEnd = leadEvents.at(-1)!;
    expect(turnEnd).toMatchObject({ type: 'turn-end', turn: 1, stopReason: 'completed' });
    // The turn's usage includes its foreground children's, as in the TurnResult.
    const ownOutput = leadEvents.filter((e) => e.type === 'assistant-message').length;
    expect(ownOutput).toBe(2);
    if (turnEnd.type === 'turn-end') expect(turnEnd.usage.inputTokens).toBeGreaterThan(0);
  });

  it('agent.events() scopes to the agent and (by default) its descendants; descendants: false keeps only its own', async () => {
    brood = treeBrood();
    const lead = await brood.createAgent({ model: route });
    const all = lead.events();
    const own = lead.events({ descendants: false });
    void lead.run('lead task');
    const [tree, mine] = await Promise.all([collect(all, leadEnded(lead.id)), collect(own, leadEnded(lead.id))]);
    expect(new Set(tree.map((e) => e.agentId)).size).toBe(4);
    expect(new Set(mine.map((e) => e.agentId))).toEqual(new Set([lead.id]));
    expect(mine.filter((e) => e.type === 'subagent-start')).toHaveLength(2);
  });

  it('inline runner: the same events', async () => {
    brood = treeBrood('inline');
    const stream = brood.events();
    const lead = await brood.createAgent({ model: route });
    void lead.run('lead task');
    const events = await collect(stream, leadEnded(lead.id));
    expect(new Set(events.map((e) => e.agentId)).size).toBe(4);
    expect(events.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(4);
  });

  it('a background job is mode background; subagent-end carries the child usage', async () => {
    brood = createBrood({
      pool: { threads: 2 },
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'bg lead',
              turns: [
                { toolCalls: [call('bg child', { run_in_background: true })] },
                { toolCalls: [{ name: 'job_output', arguments: { job_id: 'job_1', wait: true } }] },
                { text: 'ok' },
              ],
            },
            { match: 'bg child', turns: [{ text: 'background answer' }] },
          ],
        }),
      ],
    });
    brood.use(subagentTool({ provider: 'spawn' }));
    brood.use(jobTools());
    const stream = brood.events();
    const lead = await brood.createAgent({ model: route });
    void lead.run('bg lead');
    const events = await collect(stream, leadEnded(lead.id));
    const start = events.find((e) => e.type === 'subagent-start');
    expect(start).toMatchObject({ mode: 'background', agentId: lead.id });
    const end = events.find((e) => e.type === 'subagent-end');
    expect(end?.type === 'subagent-end' && end.usage.outputTokens).toBeGreaterThan(0);
  });
});

describe('subscription lifetime', () => {
  it('breaking out of the loop unsubscribes: the runtime is back to producing nothing', async () => {
    brood = treeBrood();
    const hub = runtimeOf(brood).agentDeps.hub;
    const lead = await brood.createAgent({ model: route });
    const stream = brood.events();
    expect(hub.active).toBe(true);
    void lead.run('lead task');
    await collect(stream, (events) => events.length >= 3);
    expect(hub.active).toBe(false);
    expect(Atomics.load(hub.flag, 0)).toBe(0);
    await lead.whenIdle();
  });

  it('aborting the signal ends the iteration (a pending read resolves done)', async () => {
    brood = treeBrood();
    const controller = new AbortController();
    const stream = brood.events({ signal: controller.signal });
    const iterator = stream[Symbol.asyncIterator]();
    const pending = iterator.next();
    controller.abort();
    await expect(pending).resolves.toEqual({ value: undefined, done: true });
    expect(runtimeOf(brood).agentDeps.hub.active).toBe(false);
    // Already aborted: an empty stream, no subscription.
    const late = brood.events({ signal: controller.signal });
    expect(await collect(late, () => false)).toEqual([]);
  });

  it('the stream of a disposed agent ends after its last events; brood.close() ends brood.events()', async () => {
    brood = treeBrood();
    const lead = await brood.createAgent({ model: route });
    const own = lead.events({ descendants: false });
    const all = brood.events();
    await lead.run('plain echo');
    await lead.dispose();
    const events = await collect(own, () => false);
    expect(events.map((e) => e.type)).toEqual([
      'turn-start',
      'text-delta',
      'text-delta',
      'assistant-message',
      'turn-end',
    ]);
    await brood.close();
    const everything = await collect(all, () => false);
    expect(everything.at(-1)?.type).toBe('turn-end');
  });

  it('bad options are INVALID_CONFIG; a disposed agent refuses with DISPOSED', async () => {
    brood = treeBrood();
    const lead = await brood.createAgent({ model: route });
    const code = (fn: () => unknown) => {
      try {
        fn();
        return 'none';
      } catch (error) {
        return (error as { code?: string }).code;
      }
    };
    expect(code(() => brood!.events({ buffer: 0 }))).toBe('INVALID_CONFIG');
    expect(code(() => brood!.events({ buffer: 1.5 }))).toBe('INVALID_CONFIG');
    expect(code(() => brood!.events({ descendants: true } as never))).toBe('INVALID_CONFIG');
    expect(code(() => lead.events({ descendants: 'yes' } as never))).toBe('INVALID_CONFIG');
    expect(code(() => lead.events({ signal: {} as AbortSignal }))).toBe('INVALID_CONFIG');
    await lead.dispose();
    expect(code(() => lead.events())).toBe('DISPOSED');
  });
});

describe('back-pressure: a consumer that never reads', () => {
  it('keeps at most buffer events, coalesces deltas, drops the oldest and reports one lagged event', async () => {
    brood = createBrood({
      pool: { threads: 1 },
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'long', turns: [{ text: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ') }] }],
        }),
      ],
    });
    const stream = brood.events({ buffer: 4 });
    const lead = await brood.createAgent({ model: route });
    // Nobody reads while three turns run: 3 × (turn-start + 200 deltas + assistant-message + turn-end).
    for (let i = 0; i < 3; i += 1) await lead.run('long');
    await brood.close();
    const events = await collect(stream, () => false);
    expect(events[0]).toMatchObject({ type: 'lagged', agentId: '', depth: 0, parentId: undefined });
    const dropped = events[0]!.type === 'lagged' ? events[0]!.dropped : 0;
    expect(dropped).toBeGreaterThan(0);
    expect(events.length).toBeLessThanOrEqual(5);
    // The newest events survive, in order, and the last turn's end is there.
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', turn: 3 });
    // Coalescing kept deltas from flooding the buffer: the last turn's text arrived as few deltas.
    const deltas = events.filter((e) => e.type === 'text-delta');
    expect(deltas.length).toBeLessThanOrEqual(1);
  });
});

describe('cost without subscribers', () => {
  const probe = moduleAdapter({
    id: 'probe',
    models: ['m'],
    moduleUrl: new URL('./fixtures/probe-adapter.mjs', import.meta.url),
  });

  it('with nobody subscribed the adapter gets no delta callback (nothing produced, nothing posted); with a subscriber every chunk is one delta', async () => {
    brood = createBrood({ pool: { threads: 1 }, models: [probe] });
    const agent = await brood.createAgent({ model: { provider: 'probe', model: 'm' } });
    expect((await agent.run('first')).output).toBe('no callback');
    const stream = agent.events();
    expect((await agent.run('second')).output).toBe('one two three');
    const events = await collect(stream, (seen) => seen.some((e) => e.type === 'turn-end'));
    expect(events.filter((e) => e.type === 'text-delta').map((e) => (e.type === 'text-delta' ? e.delta : ''))).toEqual([
      'one ',
      'two ',
      'three',
    ]);
    // Unsubscribed again (the loop broke): back to no callback.
    expect((await agent.run('third')).output).toBe('no callback');
  });
});
