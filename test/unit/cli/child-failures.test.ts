/** `brood run`'s closing lines about subagents that did not complete: a count, then why each failed. */
import { expect, it } from 'vitest';
import { childFailures } from '../../../src/cli/run.js';
import { TreeState } from '../../../src/cli/tree-state.js';

function treeWith(children: { reason: string; diagnostic?: string; label?: string }[]): TreeState {
  const state = new TreeState();
  state.nodeFor('agent_lead', undefined, 0, 0);
  children.forEach(({ reason, diagnostic, label }, i) => {
    const id = `sub_${i}`;
    state.addHeader({ id, parentSession: 'agent_lead', delegationDepth: 1, createdAt: i + 1 } as never);
    if (label !== undefined) state.setLabel(id, label);
    state.addEvents(id, [
      { type: 'turn/start', time: i + 1, data: {} },
      { type: 'turn/end', time: i + 2, data: { reason, ...(diagnostic === undefined ? {} : { diagnostic }) } },
    ] as never);
  });
  return state;
}

it('names each failed subagent on its own line with its label, stop reason and diagnostic', () => {
  const state = treeWith([
    { reason: 'completed', label: 'fine' },
    { reason: 'error', diagnostic: 'HTTP 500 Internal Server Error:\nloopback failure', label: 'check the numbers' },
    { reason: 'max_steps' },
  ]);
  expect(childFailures(state, 'agent_lead')).toEqual([
    'brood run: 2 of 3 subagents did not complete:',
    '  sub_1 "check the numbers" error: HTTP 500 Internal Server Error: loopback failure',
    '  sub_2 max_steps',
  ]);
});

it('says nothing when every subagent completed, and caps a long list with a count of the rest', () => {
  expect(childFailures(treeWith([{ reason: 'completed' }]), 'agent_lead')).toEqual([]);
  const lines = childFailures(treeWith(Array.from({ length: 25 }, () => ({ reason: 'aborted' }))), 'agent_lead');
  expect(lines[0]).toBe('brood run: 25 of 25 subagents did not complete:');
  expect(lines).toHaveLength(22);
  expect(lines.at(-1)).toBe('  … 5 more');
});
