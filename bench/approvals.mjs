// Approvals park only their own call. A root turn delegates to 64 sibling children at once;
// 8 of them call a tool that needs approval, which the host grants 100 ms after each request. The same
// tree runs without approvals (the tool has no rule) in interleaved rounds on one warm runtime each. The
// targets: the other 56 children finish (their `subagent-end`) within 1.05× of the run without
// approvals, and the whole run within 100 ms + 1.05× of it.
//   node --expose-gc bench/approvals.mjs [--quick]
import { createBrood, defineTool, scriptedModels, subagentTool } from '../dist/index.js';
import { attempt, withDeadline } from './lib/run-guard.mjs';
import { median, round } from './lib/stats.mjs';

const CHILDREN = 64;
const GUARDED = 8;
const GRANT_AFTER_MS = 100;
/** Each child's two model steps take this long (a real model answers in tens of ms at best). */
const MODEL_MS = 20;
const SETTLE_MS = 250;

function childPrompt(i) {
  return i % (CHILDREN / GUARDED) === 0 ? `guarded child ${i}` : `free child ${i}`;
}

function runtime(withApprovals) {
  const subagentCalls = Array.from({ length: CHILDREN }, (_, i) => ({
    name: 'subagent',
    arguments: { description: `child ${i}`, prompt: childPrompt(i) },
  }));
  const brood = createBrood({
    pool: { threads: 2 },
    maxParallelToolCalls: CHILDREN,
    ...(withApprovals ? { approvals: { children: 'ask' } } : {}),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'guarded child',
            latencyMs: MODEL_MS,
            turns: [{ toolCalls: [{ name: 'deploy', arguments: {} }] }, { text: 'deployed' }],
          },
          {
            match: 'free child',
            latencyMs: MODEL_MS,
            turns: [{ toolCalls: [{ name: 'work', arguments: {} }] }, { text: 'worked' }],
          },
          { match: 'fan out', turns: [{ toolCalls: subagentCalls }, { text: 'all done' }] },
        ],
      }),
    ],
  });
  const tool = (name, approval) =>
    defineTool({
      name,
      description: name,
      parameters: { type: 'object', properties: {} },
      concurrencySafe: true,
      execute: () => `${name} ok`,
      ...(approval ? { approval } : {}),
    });
  brood.tools.register(tool('deploy', withApprovals ? 'ask' : undefined));
  brood.tools.register(tool('work'));
  brood.use(subagentTool({ provider: 'spawn', maxDepth: 1, enableRunInBackground: false }));
  return brood;
}

/**
 * Lets the previous run's tail (activation ends, thread-side cleanup, its garbage) finish before the
 * next run starts: without it, whichever runtime ran second in a round paid for the first (measured:
 * swapping the order swapped the ratio, 1.8× ↔ 0.87×).
 */
async function settle() {
  globalThis.gc?.();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
}

/** One fan-out: makespan and each free child's finish time (ms after the root's run started). */
async function oneRun(brood) {
  await settle();
  const controller = new AbortController();
  const t0 = performance.now();
  const freeEnds = [];
  const guardedEnds = [];
  // Children that called `deploy` (in both runs, so the same 56 are compared).
  const guardedChildren = new Set();
  const watching = (async () => {
    for await (const event of brood.events({ signal: controller.signal })) {
      if (event.type === 'approval-request')
        setTimeout(() => void brood.approvals.respond(event.approvalId, { approve: true }), GRANT_AFTER_MS);
      if (event.type === 'subagent-end') {
        const guarded = guardedChildren.has(event.childId);
        (guarded ? guardedEnds : freeEnds).push(performance.now() - t0);
      }
      if (event.type === 'tool-start' && event.name === 'deploy') guardedChildren.add(event.agentId);
    }
  })();
  const agent = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
  const result = await withDeadline(agent.run('fan out'), 60_000, 'the approvals fan-out');
  const makespan = performance.now() - t0;
  controller.abort();
  await watching;
  await agent.dispose();
  if (result.stopReason !== 'completed') throw new Error(`the fan-out ended ${result.stopReason}`);
  return { makespan, freeEnds, guardedEnds };
}

export async function runApprovals({ quick, log }) {
  const rounds = quick ? 4 : 8;
  const plain = runtime(false);
  const gated = runtime(true);
  const samples = { plain: [], gated: [] };
  try {
    await oneRun(plain);
    await oneRun(gated);
    // ABBA order: each runtime runs first in half of the rounds, so an order effect cancels out.
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['plain', 'gated'] : ['gated', 'plain'];
      for (const kind of order) samples[kind].push(await oneRun(kind === 'plain' ? plain : gated));
    }
  } finally {
    await Promise.all([plain.close(), gated.close()]);
  }
  const makespan = (kind) => median(samples[kind].map((s) => s.makespan));
  // Free children in the gated run: those that never called `deploy` (the guarded 8 tracked by tool-start).
  const lastFree = (kind) => median(samples[kind].map((s) => Math.max(...s.freeEnds)));
  const out = {
    children: CHILDREN,
    guarded: GUARDED,
    grantAfterMs: GRANT_AFTER_MS,
    rounds,
    plainMakespanMs: round(makespan('plain'), 1),
    gatedMakespanMs: round(makespan('gated'), 1),
    plainLastFreeMs: round(lastFree('plain'), 1),
    gatedLastFreeMs: round(lastFree('gated'), 1),
  };
  out.freeRatio = round(out.gatedLastFreeMs / out.plainLastFreeMs, 3);
  out.makespanOverBudget = round(out.gatedMakespanMs / (GRANT_AFTER_MS + 1.05 * out.plainMakespanMs), 3);
  log(
    `approvals: 64 children, 8 granted after 100 ms — the other 56 done ${out.gatedLastFreeMs} ms vs ${out.plainLastFreeMs} ms (${out.freeRatio}×); run ${out.gatedMakespanMs} ms vs ${out.plainMakespanMs} ms`,
  );
  return out;
}

// Alone: `node --expose-gc bench/approvals.mjs [--quick]` (needs `npm run build`).
if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  const log = (line) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${line}`);
  const result = await attempt(() => runApprovals({ quick: process.argv.includes('--quick'), log }));
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
