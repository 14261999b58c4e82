/** The live tree rendered to strings: never taller or wider than the terminal, display-width aware. */
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { TreeState } from '../../../src/cli/tree-state.js';
import { renderTree, summaryLines } from '../../../src/cli/tree-view.js';
import type { BroodEvent } from '../../../src/index.js';

const measure = (text: string): number => stringWidth(text);
const base = (agentId: string, parentId: string | undefined, depth: number, time: number) => ({
  agentId,
  parentId,
  depth,
  time,
});
const usage = (n: number) => ({ inputTokens: n, outputTokens: n });

const LABELS = [
  '調査: 先行設計の比較',
  'analyse 📊 benchmark numbers in depth',
  'vérifier les mesures aberrantes',
  '🚀🚀 launch review',
  'collect citations for every claim in the brief',
];

/** A lead with 40 children (every third still running) and one grandchild under each of the first five. */
function bigTree(): { state: TreeState; lead: string } {
  const state = new TreeState();
  const lead = 'agent_lead';
  const apply = (event: BroodEvent): void => state.apply(event);
  state.nodeFor(lead, undefined, 0, 1000);
  state.setLabel(lead, 'Research brief: how should an agent runtime isolate subagents? 研究');
  apply({ ...base(lead, undefined, 0, 1000), type: 'turn-start', turn: 1, messageIds: ['m1'] });
  for (let i = 0; i < 40; i += 1) {
    const child = `sub_${String(i).padStart(2, '0')}`;
    apply({
      ...base(lead, undefined, 0, 1001 + i),
      type: 'subagent-start',
      childId: child,
      mode: 'foreground',
      provider: 'spawn',
    });
    state.setLabel(child, LABELS[i % LABELS.length]!);
    apply({ ...base(child, lead, 1, 1001 + i), type: 'turn-start', turn: 1, messageIds: [`c${i}`] });
    if (i < 5) {
      const grandchild = `sub_g${i}`;
      apply({
        ...base(child, lead, 1, 1100 + i),
        type: 'subagent-start',
        childId: grandchild,
        mode: 'foreground',
        provider: 'spawn',
      });
      state.setLabel(grandchild, `grandchild ${i} ✅ 検証`);
      apply({ ...base(grandchild, child, 2, 1100 + i), type: 'turn-start', turn: 1, messageIds: [`g${i}`] });
      apply({
        ...base(grandchild, child, 2, 1200 + i),
        type: 'turn-end',
        turn: 1,
        stopReason: 'completed',
        usage: usage(10),
      });
      apply({
        ...base(child, lead, 1, 1201 + i),
        type: 'subagent-end',
        childId: grandchild,
        stopReason: 'completed',
        usage: usage(10),
      });
    }
    if (i % 3 !== 0) {
      apply({
        ...base(child, lead, 1, 1300 + i),
        type: 'turn-end',
        turn: 1,
        stopReason: 'completed',
        usage: usage(i < 5 ? 25 : 15),
      });
      apply({
        ...base(lead, undefined, 0, 1301 + i),
        type: 'subagent-end',
        childId: child,
        stopReason: 'completed',
        usage: usage(i < 5 ? 25 : 15),
      });
    }
  }
  return { state, lead };
}

describe('renderTree', () => {
  for (const [columns, rows] of [
    [80, 24],
    [120, 6],
    [200, 60],
  ] as const) {
    it(`${columns}×${rows}: fits the terminal, keeps the lead and running agents, says what it left out`, () => {
      const { state, lead } = bigTree();
      const lines = renderTree(state, { now: 2000, live: true, columns, rows, measure });
      expect(lines.length).toBeLessThanOrEqual(rows - 1);
      for (const line of lines) expect(measure(line)).toBeLessThanOrEqual(columns - 1);
      expect(lines.some((line) => line.includes(lead))).toBe(true);
      const total = state.nodes.size; // 46
      const shownAgents = lines.filter((line) => /\b(agent_lead|sub_\S+)/.test(line) && !line.startsWith('…'));
      if (total + 1 <= rows - 1) {
        expect(shownAgents).toHaveLength(total);
        expect(lines.some((line) => line.startsWith('…'))).toBe(false);
      } else {
        const clipLine = lines.at(-1)!;
        const match = /^… (\d+) more \((\d+) running\)$/.exec(clipLine);
        expect(match).not.toBeNull();
        expect(shownAgents.length + Number(match![1])).toBe(total);
        expect(lines).toHaveLength(rows - 1);
        // Running agents are preferred: every shown child row is running until the running ones run out.
        const running = [...state.nodes.values()].filter((n) => n.openTurn).length;
        const shownRunning = shownAgents.filter((line) => /\s(running|waiting)\s/.test(line)).length;
        expect(shownRunning).toBe(Math.min(running, shownAgents.length));
        expect(Number(match![2])).toBe(running - shownRunning);
      }
      if (columns >= 120) {
        // Wide terminals show labels, cut by display width (CJK and emoji count two columns).
        expect(lines.some((line) => line.includes('調査'))).toBe(true);
      }
    });
  }

  it('below three lines (a 3-row terminal) the tree is one line counting agents by state', () => {
    const { state } = bigTree();
    const lines = renderTree(state, { now: 2000, live: true, columns: 80, rows: 3, measure });
    // The lead and every third child are running; 26 children and 5 grandchildren have completed.
    expect(lines).toEqual(['46 agents: 15 running, 31 completed']);
  });

  it('a wide label uses the width available and is cut by display width with an ellipsis', () => {
    const state = new TreeState();
    state.nodeFor('agent_a', undefined, 0, 0);
    state.setLabel('agent_a', '漢字'.repeat(100));
    const [, row] = renderTree(state, { now: 10, live: false, columns: 80, rows: 24, measure });
    expect(measure(row!)).toBeLessThanOrEqual(79);
    expect(row).toContain('…');
    const wide = renderTree(state, { now: 10, live: false, columns: 200, rows: 24, measure })[1]!;
    expect(measure(wide)).toBeGreaterThan(measure(row!));
  });

  it('the last frame (live: false) shows the same per-agent tokens and durations as the summary', () => {
    const { state } = bigTree();
    const frame = renderTree(state, { now: 5000, live: false, columns: 200, rows: Number.POSITIVE_INFINITY, measure });
    const summary = summaryLines(state, 4000, measure, 200);
    for (const node of state.nodes.values()) {
      const row = frame.find(
        (line) => line.includes(` ${node.id} `) || line.startsWith(`${node.id} `) || line.includes(`─ ${node.id} `),
      )!;
      const summaryRow = summary.find((line) => line.startsWith(`${node.id} `))!;
      expect(row).toContain(`${node.inputTokens}/${node.outputTokens}`);
      expect(summaryRow).toMatch(new RegExp(`\\s${node.inputTokens}\\s+${node.outputTokens}\\s`));
    }
    // Own tokens: a child's grandchild usage is not counted twice.
    expect(state.nodes.get('sub_01')!.inputTokens).toBe(15);
  });
});
