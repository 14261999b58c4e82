/**
 * Budgets down a delegation tree on real pool threads: parallel children spend one remainder (their
 * parent's turn's), and continuable children keep their subagentTool ceiling and their parent's
 * remainder on their first turn and on every followup, across a restart too; a final answer that
 * crosses maxTokens is kept, and the diagnostic names the budget it crossed.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, memorySessions, type SessionEvent, type SessionStore, subagentTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { ofType } from '../../support/events.js';
import { fanOutScript, subagentCall } from '../../support/fan-out.js';
import { route } from '../../support/route.js';
import { closeAfterEach, type Harness, harness, isNotice, type Script } from '../subagents/helpers.js';

const { open } = closeAfterEach();

function setup(scripts: Script[], inner?: SessionStore): Harness {
  const h = harness({ scripts, ...(inner ? { inner } : {}) });
  open.push(h);
  return h;
}

/** `n` model steps that each call a tool that does not exist (an error result, then the next step). */
function busySteps(n: number) {
  return Array.from({ length: n }, () => ({
    toolCalls: [{ name: 'missing_tool', arguments: { pad: 'x'.repeat(200) } }],
  }));
}

const tokensOf = (events: SessionEvent[]): number =>
  ofType(events, 'assistant/message').reduce((sum, event) => {
    const usage = event.data.usage as { inputTokens: number; outputTokens: number };
    return sum + usage.inputTokens + usage.outputTokens;
  }, 0);

const largestResponse = (events: SessionEvent[]): number =>
  Math.max(
    0,
    ...ofType(events, 'assistant/message').map((event) => {
      const usage = event.data.usage as { inputTokens: number; outputTokens: number };
      return usage.inputTokens + usage.outputTokens;
    }),
  );

/** Tokens every session in the store reported, and the largest single response among them. */
async function treeTokens(h: Harness): Promise<{ total: number; largest: number }> {
  let total = 0;
  let largest = 0;
  for (const header of await h.headers()) {
    const events = await h.events(header.id);
    total += tokensOf(events);
    largest = Math.max(largest, largestResponse(events));
  }
  return { total, largest };
}

function turnEnds(h: Harness, id: string): unknown[] {
  return ofType(h.tap.log(id), 'turn/end').map((event) => event.data.reason);
}

function childOf(h: Harness, parentId: string): string {
  const started = ofType(h.tap.log(parentId), 'tool/result').find((event) => event.data.name === 'subagent');
  const id = /^started subagent (\S+)$/.exec(String(started?.data.content))?.[1];
  if (id === undefined) throw new Error(`no continuable child started by ${parentId}`);
  return id;
}

describe('parallel children share their parent turn’s token remainder', () => {
  it('stops eight parallel children once their shared maxTokens is spent (overrun: one response per request in flight)', async () => {
    const children = 8;
    const maxTokens = 10_000;
    const h = setup([fanOutScript(children), { match: 'child', latencyMs: 20, turns: busySteps(60) }]);
    h.brood.use(subagentTool({ provider: 'spawn' }));
    const parent = await h.brood.createAgent({ model: route });
    const result = await parent.run('fan out', { budget: { maxTokens } });
    expect(result.stopReason).toBe('budget');
    expect(result.diagnostic).toMatch(/budget \(tokens\)/);
    const { total, largest } = await treeTokens(h);
    // Alone, each child would spend the whole remainder (about eight times the budget together).
    expect(total).toBeLessThanOrEqual(maxTokens + children * largest);
    expect(total).toBeLessThan(2 * maxTokens);
  });

  it('ends every sibling with stop reason budget when one of them spends the last of the remainder', async () => {
    const h = setup([fanOutScript(2), { match: 'child', latencyMs: 20, turns: busySteps(60) }]);
    h.brood.use(subagentTool({ provider: 'spawn' }));
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('fan out', { budget: { maxTokens: 5_000 } });
    const results = ofType(h.tap.log(parent.id), 'tool/result').filter((event) => event.data.name === 'subagent');
    expect(results).toHaveLength(2);
    for (const event of results) expect(event.data.content).toMatch(/^Error: subagent run hit its budget \(tokens\)/);
  });
});

describe('continuable children keep their budgets', () => {
  it("applies the subagentTool ceiling to a continuable child's first turn", async () => {
    const h = setup([
      { match: 'go', turns: [{ toolCalls: [subagentCall('long task')] }, { text: 'started it' }] },
      { match: 'long task', turns: [...busySteps(40), { text: 'finished' }] },
    ]);
    h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable', budget: { maxTokens: 3_000 } }));
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('go');
    const childId = childOf(h, parent.id);
    const notice = await h.tap.waitFor(parent.id, 'user/message', isNotice);
    expect(notice.data.text).toMatch(/hit its budget/);
    expect(turnEnds(h, childId)).toEqual(['budget']);
    expect(tokensOf(h.tap.log(childId))).toBeLessThan(3_000 + largestResponse(h.tap.log(childId)) + 1);
  });

  it("gives a continuable child's turn at most what the delegating turn has left, spent from it", async () => {
    const h = setup([
      { match: 'go', turns: [{ toolCalls: [subagentCall('long task')] }, { text: 'started it' }] },
      { match: 'long task', turns: [...busySteps(40), { text: 'finished' }] },
    ]);
    h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable' }));
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('go', { budget: { maxTokens: 3_000 } });
    const childId = childOf(h, parent.id);
    await h.tap.waitFor(parent.id, 'user/message', isNotice);
    expect(turnEnds(h, childId)).toEqual(['budget']);
  });

  it('gives a followup at most what the sending turn has left, spent from it', async () => {
    const h = setup([
      {
        match: 'go',
        turns: [
          { toolCalls: [subagentCall('first task')] },
          { text: 'started' },
          { text: 'noted' },
          { toolCalls: [{ name: 'nudge', arguments: {} }] },
          { text: 'sent' },
        ],
      },
      { match: 'first task', turns: [{ text: 'first done' }, ...busySteps(40), { text: 'second done' }] },
    ]);
    h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable' }));
    let childId = '';
    // What send_message does: a followup from the calling agent's running turn.
    h.brood.tools.register(
      defineTool({
        name: 'nudge',
        description: 'Sends the child its next task.',
        parameters: z.object({}),
        execute: async (_args, ctx) => {
          if (ctx.agent === undefined) throw new Error('nudge needs an agent');
          await h.brood.subagents.followup(ctx.agent, childId, 'second task', { signal: ctx.signal });
          return 'sent';
        },
      }),
    );
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('go');
    childId = childOf(h, parent.id);
    const notice = await h.tap.waitFor(parent.id, 'user/message', isNotice);
    const claimed = await h.tap.waitFor(parent.id, 'turn/start', (event) =>
      (event.data.messageIds as string[]).includes(String(notice.data.id)),
    );
    await h.tap.waitFor(parent.id, 'turn/end', (event) => event.data.turn === claimed.data.turn);
    await parent.run('follow up', { budget: { maxTokens: 3_000 } });
    await h.tap.waitFor(childId, 'turn/end', (event) => event.data.turn === 2);
    expect(turnEnds(h, childId)).toEqual(['completed', 'budget']);
  });

  it('applies the ceiling to every followup, and again after a restart rebuilt the child', async () => {
    const store = memorySessions();
    const childScript: Script = {
      match: 'first task',
      turns: [{ text: 'first done' }, ...busySteps(40), { text: 'second done' }, ...busySteps(40)],
    };
    const h = setup(
      [{ match: 'go', turns: [{ toolCalls: [subagentCall('first task')] }, { text: 'started it' }] }, childScript],
      store,
    );
    h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable', budget: { maxTokens: 3_000 } }));
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('go');
    const childId = childOf(h, parent.id);
    await h.tap.waitFor(childId, 'turn/end', (event) => event.data.turn === 1);
    await h.brood.subagents.followup(parent, childId, 'second task', { signal: new AbortController().signal });
    await h.tap.waitFor(childId, 'turn/end', (event) => event.data.turn === 2);
    expect(turnEnds(h, childId)).toEqual(['completed', 'budget']);
    await h.brood.close();

    // Another runtime on the same store: the followup rebuilds the child, with its ceiling.
    const again = setup([childScript], store);
    const resumed = await again.brood.resumeAgent(parent.id);
    await again.brood.subagents.followup(resumed, childId, 'third task', { signal: new AbortController().signal });
    const third = await again.tap.waitFor(childId, 'turn/end', (event) => event.data.turn === 3);
    expect(third.data.reason).toBe('budget');
  });
});

describe('a final answer that crosses maxTokens', () => {
  const answer = 'the complete answer';

  it("ends the run 'budget' with the answer as its output and a diagnostic naming maxTokens", async () => {
    const h = setup([{ match: 'ask', turns: [{ text: answer }] }]);
    const agent = await h.brood.createAgent({ model: route });
    const result = await agent.run('ask', { budget: { maxTokens: 5 } });
    expect(result.stopReason).toBe('budget');
    expect(result.output).toBe(answer);
    expect(result.diagnostic).toMatch(/^the run hit its budget \(tokens\): used \d+ tokens of 5 tokens \(maxTokens\)/);
    expect(result.diagnostic).toMatch(/its final answer was already in and is the output$/);
  });

  it("hands a delegating parent the child's answer as its final answer, not as partial output", async () => {
    const h = setup([
      { match: 'delegate', turns: [{ toolCalls: [subagentCall('small task')] }, { text: 'parent done' }] },
      { match: 'small task', turns: [{ text: answer }] },
    ]);
    h.brood.use(subagentTool({ provider: 'spawn', budget: { maxTokens: 5 } }));
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('delegate');
    const [result] = ofType(h.tap.log(parent.id), 'tool/result');
    expect(result?.data.isError).toBe(true);
    expect(result?.data.content).toMatch(/^Error: subagent run hit its budget \(tokens\)\n/);
    expect(result?.data.content).toMatch(/\(maxTokens\); its final answer was already in and is the output\n/);
    expect(String(result?.data.content).endsWith(`\nFinal answer:\n${answer}`)).toBe(true);
  });
});

describe('a start request budget', () => {
  it('is refused INVALID_CONFIG when it is not a budget, and nothing is created', async () => {
    const h = setup([]);
    const parent = await h.brood.createAgent({ model: route });
    const before = (await h.headers()).length;
    const start = h.brood.subagents.start('spawn', {
      parent,
      prompt: 'x',
      signal: new AbortController().signal,
      budget: { maxTokens: -1 },
    });
    await expectCode(start, 'INVALID_CONFIG');
    expect(await h.headers()).toHaveLength(before);
  });
});
