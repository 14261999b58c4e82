/** The live tree shows an agent whose turn waits for admission (createBrood limits) as queued. */
import { describe, expect, it } from 'vitest';
import { stateOf, TreeState } from '../../../src/cli/tree-state.js';
import type { BroodEvent } from '../../../src/types.js';

const base = { agentId: 'child', parentId: 'lead', depth: 1, time: 1 };

describe('TreeState and admission', () => {
  it('is queued from a queued agent event until its turn starts', () => {
    const tree = new TreeState();
    const apply = (event: BroodEvent) => tree.apply(event);
    apply({ ...base, type: 'turn-start', turn: 1, messageIds: ['m1'] });
    apply({ ...base, type: 'turn-end', turn: 1, stopReason: 'completed', usage: { inputTokens: 1, outputTokens: 1 } });
    apply({ ...base, type: 'queued', what: 'agent', position: 3 });
    const node = tree.nodes.get('child');
    if (node === undefined) throw new Error('no node');
    expect(stateOf(node, true)).toBe('queued');
    apply({ ...base, type: 'admitted', what: 'agent', waitedMs: 12 });
    apply({ ...base, type: 'turn-start', turn: 2, messageIds: ['m2'] });
    expect(stateOf(node, true)).toBe('running');
  });

  it('does not count a queued model request as a queued agent', () => {
    const tree = new TreeState();
    tree.apply({ ...base, type: 'turn-start', turn: 1, messageIds: ['m1'] });
    tree.apply({ ...base, type: 'queued', what: 'model-request', provider: 'openai', position: 1 });
    expect(stateOf(tree.nodes.get('child') ?? expect.unreachable(), true)).toBe('running');
  });
});
