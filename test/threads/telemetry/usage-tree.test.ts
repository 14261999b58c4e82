/**
 * Usage per child: TurnResult.usageTree (the turn's foreground subtree) and brood.usage() (read from
 * the sessions, every descendant), which a new runtime on the same store reads back unchanged.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, SessionStore, UsageNode } from '../../../src/index.js';
import { createBrood, jobTools, memorySessions, scriptedModels, subagentTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { labelledCall } from '../../support/fan-out.js';
import { route } from '../../support/route.js';
import { until } from '../../support/until.js';

const delegate = labelledCall;

const models = scriptedModels({
  id: 'scripted',
  scripts: [
    {
      match: 'lead task',
      turns: [
        { toolCalls: [delegate('alpha work'), delegate('delta work', { run_in_background: true })] },
        { text: 'All done.' },
      ],
    },
    { match: 'alpha work', turns: [{ toolCalls: [delegate('gamma work')] }, { text: 'alpha done' }] },
    { match: 'gamma work', turns: [{ text: 'gamma done, with a longer answer than the others' }] },
    { match: 'delta work', turns: [{ text: 'delta done in the background' }] },
  ],
});

const runtimes: Brood[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((brood) => brood.close()));
});

function broodOn(sessions: SessionStore): Brood {
  const brood = createBrood({ runner: 'worker', pool: { threads: 2 }, models: [models], sessions });
  brood.use(subagentTool({ provider: 'spawn', enableRunInBackground: true }));
  brood.use(jobTools());
  runtimes.push(brood);
  return brood;
}

const find = (node: UsageNode, label: string): UsageNode | undefined =>
  node.label === label ? node : node.children.map((child) => find(child, label)).find(Boolean);

/** Checks total = own + children's totals at every node. */
function expectRolledUp(node: UsageNode): void {
  const input = node.children.reduce((sum, child) => sum + child.total.inputTokens, node.usage.inputTokens);
  const output = node.children.reduce((sum, child) => sum + child.total.outputTokens, node.usage.outputTokens);
  expect(node.total).toEqual({ inputTokens: input, outputTokens: output });
  for (const child of node.children) expectRolledUp(child);
}

describe('usage trees', () => {
  it('a turn result carries its foreground subtree; brood.usage adds the background child and survives a restart', async () => {
    const sessions = memorySessions();
    const brood = broodOn(sessions);
    const lead = await brood.createAgent({ id: 'lead', model: route });
    const result = await lead.run('lead task');

    const tree = result.usageTree;
    expect(tree).toMatchObject({ agentId: 'lead', provider: 'scripted', model: 'scripted' });
    expect(tree.total).toEqual(result.usage);
    expect(tree.children.map((child) => child.label)).toEqual(['alpha']);
    const gamma = find(tree, 'gamma');
    expect(gamma?.usage.outputTokens).toBeGreaterThan(0);
    expect(find(tree, 'delta')).toBeUndefined();
    expectRolledUp(tree);

    // The background child's settlement notice gives the lead a second turn: everything is logged after it.
    const turnEnds = async () =>
      (await sessions.read('lead')).events.filter((event) => event.type === 'turn/end').length;
    await until(async () => (await turnEnds()) === 2);
    await lead.whenIdle();
    const whole = await brood.usage('lead', { subtree: true });
    expect(whole.children.map((child) => child.label).sort()).toEqual(['alpha', 'delta']);
    expect(find(whole, 'gamma')).toEqual({ ...gamma, children: [] });
    expectRolledUp(whole);
    const own = await brood.usage('lead');
    expect(own.children).toEqual([]);
    expect(own.total).toEqual(own.usage);
    await brood.close();

    const restarted = broodOn(sessions);
    expect(await restarted.usage('lead', { subtree: true })).toEqual(whole);
  });

  it('refuses a bad id or unknown options', async () => {
    const brood = broodOn(memorySessions());
    await expectCode(brood.usage('../x'), 'INVALID_ARGS');
    await expectCode(brood.usage('lead', { deep: true } as never), 'INVALID_CONFIG');
  });
});
