/**
 * Budgets (timeout, idle, tokens) on real pool threads, their inheritance down the tree, the failed
 * delegation they make, QUEUE_FULL both ways, and the configuration errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/brood.js';
import { createBrood } from '../../../src/brood.js';
import { subagentTool } from '../../../src/delegation/index.js';
import type { ScriptedScript } from '../../../src/models/scripted.js';
import { scriptedModels } from '../../../src/models/scripted.js';
import type { BroodEvent } from '../../../src/types.js';
import { expectCode } from '../../support/codes.js';
import { eventsOf, ofType } from '../../support/events.js';
import { subagentCall } from '../../support/fan-out.js';
import { route } from '../../support/route.js';
import { workerBrood } from '../../support/runtime.js';
import { until } from '../../support/until.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const delegate = (prompt: string) => subagentCall(prompt);

function scripted(scripts: ScriptedScript[], extra: Parameters<typeof workerBrood>[0] = {}): Brood {
  brood = workerBrood({ models: [scriptedModels({ id: 'scripted', scripts })], ...extra });
  return brood;
}

describe('budgets', () => {
  it("ends a run past timeoutMs with stop reason 'budget', a diagnostic naming it, and a budget-exceeded event", async () => {
    const b = scripted([{ match: 'slow', latencyMs: 5_000, turns: [{ text: 'late' }] }]);
    const events: BroodEvent[] = [];
    const collecting = (async () => {
      for await (const event of b.events()) events.push(event);
    })();
    const agent = await b.createAgent({ model: route });
    const result = await agent.run('slow', { budget: { timeoutMs: 100 } });
    expect(result.stopReason).toBe('budget');
    expect(result.diagnostic).toMatch(/budget \(timeout\).* of 100 ms/);
    expect(events.find((event) => event.type === 'budget-exceeded')).toMatchObject({
      agentId: agent.id,
      budget: 'timeout',
      limit: 100,
    });
    await b.close();
    await collecting;
  });

  it('ends the turn before its next request once maxTokens is spent (the agent budget applies to every run)', async () => {
    const b = scripted([
      { match: 'work', turns: [{ toolCalls: [{ name: 'missing_tool', arguments: {} }] }, { text: 'never asked' }] },
    ]);
    const agent = await b.createAgent({ model: route, budget: { maxTokens: 1 } });
    const result = await agent.run('work');
    expect(result.stopReason).toBe('budget');
    expect(result.diagnostic).toMatch(/budget \(tokens\)/);
    expect(ofType(await eventsOf(b, agent.id), 'assistant/message')).toHaveLength(1);
  });

  it('counts timeoutMs from run(): time queued for its turn (limits.agents) is part of the run', async () => {
    const b = scripted(
      [
        { match: 'hold', latencyMs: 600, turns: [{ text: 'held' }] },
        { match: 'quick', latencyMs: 50, turns: [{ text: 'quick' }] },
      ],
      { limits: { agents: 1 } },
    );
    const holder = await b.createAgent({ model: route });
    const queued = await b.createAgent({ model: route });
    const holding = holder.run('hold');
    await until(() => b.scheduler.stats().running === 1);
    // Its turn cannot start before the holder's ends (600 ms), after its 300 ms are up; counted from
    // the turn's start instead, its 50 ms request would fit.
    const result = await queued.run('quick', { budget: { timeoutMs: 300 } });
    expect(result.stopReason).toBe('budget');
    expect(result.diagnostic).toMatch(/budget \(timeout\)/);
    expect((await holding).stopReason).toBe('completed');
  });

  it('ends an idle run (no response or tool result for idleTimeoutMs)', async () => {
    const b = scripted([{ match: 'idle', latencyMs: 5_000, turns: [{ text: 'late' }] }]);
    const agent = await b.createAgent({ model: route });
    const result = await agent.run('idle', { budget: { idleTimeoutMs: 100 } });
    expect(result).toMatchObject({ stopReason: 'budget', diagnostic: expect.stringMatching(/budget \(idle\)/) });
  });

  it("makes a child that hits its budget a failed delegation headed 'subagent run hit its budget (timeout)'", async () => {
    const b = scripted([
      { match: 'delegate', turns: [{ toolCalls: [delegate('slow child')] }, { text: 'parent done' }] },
      { match: 'slow child', latencyMs: 5_000, turns: [{ text: 'late' }] },
    ]);
    b.use(subagentTool({ provider: 'spawn', budget: { timeoutMs: 100 } }));
    const parent = await b.createAgent({ model: route });
    const result = await parent.run('delegate');
    expect(result.stopReason).toBe('completed');
    const [toolResult] = ofType(await eventsOf(b, parent.id), 'tool/result');
    expect(toolResult?.data.isError).toBe(true);
    expect(toolResult?.data.content).toMatch(/^Error: subagent run hit its budget \(timeout\)/);
  });

  it("cannot be loosened by a child: the parent's remainder caps a looser subagentTool budget", async () => {
    const b = scripted([
      { match: 'delegate', turns: [{ toolCalls: [delegate('slow child')] }, { text: 'parent done' }] },
      { match: 'slow child', latencyMs: 5_000, turns: [{ text: 'late' }] },
    ]);
    b.use(subagentTool({ provider: 'spawn', budget: { timeoutMs: 60_000 } }));
    const parent = await b.createAgent({ model: route });
    const started = performance.now();
    const result = await parent.run('delegate', { budget: { timeoutMs: 300 } });
    expect(result.stopReason).toBe('budget');
    // Neither the child's 5 s answer nor its own 60 s budget held the parent.
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it('refuses a non-positive or non-finite budget with INVALID_CONFIG at every door', async () => {
    const b = scripted([]);
    await expectCode(b.createAgent({ model: route, budget: { timeoutMs: 0 } }), 'INVALID_CONFIG');
    const agent = await b.createAgent({ model: route });
    await expectCode(agent.run('x', { budget: { maxTokens: Number.POSITIVE_INFINITY } }), 'INVALID_CONFIG');
    expectCode(() => b.use(subagentTool({ provider: 'spawn', budget: { idleTimeoutMs: -1 } })), 'INVALID_CONFIG');
  });
});

describe('QUEUE_FULL', () => {
  it('rejects a top-level run past limits.queue.max', async () => {
    const b = scripted([{ match: 'slow', latencyMs: 300, turns: [{ text: 'ok' }] }], {
      limits: { agents: 1, queue: { max: 1 } },
    });
    const [first, second, third] = await Promise.all([1, 2, 3].map(() => b.createAgent({ model: route })));
    const running = first?.run('slow');
    await waitForStats(b, (stats) => stats.running === 1);
    const queued = second?.run('slow');
    await waitForStats(b, (stats) => stats.queued === 1);
    await expectCode(third?.run('slow') ?? Promise.resolve(), 'QUEUE_FULL');
    expect((await running)?.stopReason).toBe('completed');
    expect((await queued)?.stopReason).toBe('completed');
  });

  it('makes a child start past it an errored tool result with the code (never a throw)', async () => {
    const b = scripted(
      [
        { match: 'fan', turns: [{ toolCalls: [1, 2, 3, 4].map((n) => delegate(`child ${n}`)) }, { text: 'done' }] },
        { match: 'child', latencyMs: 300, turns: [{ text: 'ok' }] },
      ],
      { limits: { agents: 1, queue: { max: 1 } } },
    );
    b.use(subagentTool({ provider: 'spawn' }));
    const parent = await b.createAgent({ model: route });
    const result = await parent.run('fan');
    expect(result.stopReason).toBe('completed');
    const results = ofType(await eventsOf(b, parent.id), 'tool/result');
    const refused = results.filter((event) => event.data.isError);
    expect(refused.length).toBeGreaterThan(0);
    for (const event of refused) expect(event.data.errorCode).toBe('QUEUE_FULL');
    expect(results.some((event) => !event.data.isError)).toBe(true);
  });
});

describe('limits configuration', () => {
  it.each([
    ['limits.agents', { agents: 0 }],
    ['limits.modelRequests', { modelRequests: 1.5 }],
    ['limits.agents', { agents: Number.NaN }],
    ['limits.providers.scripted.requestsPerMinute', { providers: { scripted: { requestsPerMinute: -1 } } }],
    ['limits.providers.scripted.concurrent', { providers: { scripted: { concurrent: Number.POSITIVE_INFINITY } } }],
    ['limits.providers.nowhere', { providers: { nowhere: { concurrent: 1 } } }],
    ['limits.queue.max', { queue: { max: 0 } }],
  ])('refuses %s with INVALID_CONFIG naming the key', (key, limits) => {
    const error = expectCode(() => createBrood({ runner: 'inline', limits }), 'INVALID_CONFIG');
    expect(error.message).toContain(key);
  });
});

async function waitForStats(b: Brood, ready: (stats: ReturnType<Brood['scheduler']['stats']>) => boolean) {
  await until(() => ready(b.scheduler.stats()));
}
