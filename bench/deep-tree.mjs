// SPEC §12 deep tree: depth 6, branching 2, 2 pool threads. Every internal agent makes one request
// that delegates to 2 children, waits, then answers (2 requests); leaves answer at once (1 request).
// Each request has latency L, so the ideal for depth D is (2D + 1)·L. Trees of depth 1..D (quick: 2, 4, 6) are timed;
// overhead per level = (makespan − ideal) / D, and the slope across depths shows whether it grows.

import { installDelegation, makeBrood, timedRun } from './lib/brood.mjs';
import { L } from './lib/schedule.mjs';
import { round } from './lib/stats.mjs';

const BRANCH = 2;
const THREADS = 2; // fixed by the SPEC: far fewer threads than concurrently waiting drivers (no-deadlock check)

/** Scripts keyed by remaining height, so one set of scripts serves every tree depth. */
function treeScripts(maxDepth) {
  const scripts = [{ match: 'tree-node h=0;', latencyMs: L, turns: [{ text: 'leaf' }] }];
  for (let h = 1; h <= maxDepth; h++) {
    const calls = Array.from({ length: BRANCH }, (_, i) => ({
      name: 'subagent',
      arguments: { description: `node ${i}`, prompt: `tree-node h=${h - 1}; #${i}` },
    }));
    scripts.push({
      match: `tree-node h=${h};`,
      latencyMs: L,
      turns: [{ toolCalls: calls }, { text: `level ${h} done` }],
    });
  }
  return scripts;
}

function timeTree(brood, depth) {
  return timedRun(brood, `tree-node h=${depth};`, `tree depth ${depth}`, 120_000);
}

export async function runDeepTree({ quick, log }) {
  const maxDepth = 6;
  const out = { branching: BRANCH, threads: THREADS, L, byRunner: {} };
  for (const runner of ['worker', 'inline']) {
    const brood = makeBrood({ runner, threads: THREADS, scripts: treeScripts(maxDepth) });
    installDelegation(brood, { maxDepth });
    await timeTree(brood, 2); // warm-up
    const rows = [];
    // --quick samples fewer depths; the slope still comes from the same fit.
    for (const depth of quick ? [2, 4, 6] : [1, 2, 3, 4, 5, 6]) {
      const reps = quick ? 1 : 3;
      const times = [];
      for (let r = 0; r < reps; r++) times.push(await timeTree(brood, depth));
      const ms = times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
      const ideal = (2 * depth + 1) * L;
      rows.push({
        depth,
        agents: 2 ** (depth + 1) - 1,
        makespanMs: round(ms, 1),
        idealMs: ideal,
        overheadPerLevelMs: round((ms - ideal) / depth, 2),
      });
    }
    await brood.close();
    // Least-squares slope of overhead vs depth: the marginal cost of one more level.
    const xs = rows.map((r) => r.depth);
    const ys = rows.map((r) => r.makespanMs - r.idealMs);
    const mx = xs.reduce((a, b) => a + b) / xs.length;
    const my = ys.reduce((a, b) => a + b) / ys.length;
    const slope = xs.reduce((s, x, i) => s + (x - mx) * (ys[i] - my), 0) / xs.reduce((s, x) => s + (x - mx) ** 2, 0);
    out.byRunner[runner] = { rows, marginalOverheadPerLevelMs: round(slope, 2), completed: true };
    const top = rows.at(-1);
    log(
      `deep tree ${runner}: depth ${top.depth} (${top.agents} agents) ${top.makespanMs} ms vs ideal ${top.idealMs} ms; ${top.overheadPerLevelMs} ms/level`,
    );
  }
  return out;
}
