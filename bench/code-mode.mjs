// What the run_code sandbox costs. One pool thread, codeMode 'both', a trivial tool `noop`
// whose body stamps performance.now() in the parent. Three sequences, each in one assistant message:
//   native   M sequential native calls of noop          → gap = one native call, run by the parent (A)
//   program  one run_code looping M awaited noop calls  → gap = one tool call from inside a program (B)
//   programs K run_code calls, each one awaited noop    → gap = program end + next program start + one call (C)
// Warm engine start ≈ C − B (p50s): finishing one program and starting the next on a warm sandbox
// thread (fresh runtime + context + prelude). Cold start: the first run_code of a fresh runtime
// (sandbox thread start + engine load) minus the same program on the now-warm thread.
import * as broodPkg from '../dist/index.js';
import { ROUTE } from './lib/brood.mjs';
import { withDeadline } from './lib/run-guard.mjs';
import { median, round, summarize } from './lib/stats.mjs';

const { createBrood, scriptedModels, defineTool } = broodPkg;
const ONE_CALL = 'await tools.noop({}); return 1;';

function makeRuntime(scripts, stamps) {
  const brood = createBrood({
    codeMode: 'both',
    maxParallelToolCalls: 1,
    pool: { threads: 1 },
    // The in-program sequence makes more calls than the default cap of 1,000 per program.
    codeResourceLimits: { maxToolCalls: 100_000 },
    models: [scriptedModels({ id: 'scripted', scripts })],
  });
  brood.tools.register(
    defineTool({
      name: 'noop',
      description: 'does nothing and returns ok',
      parameters: { type: 'object', properties: {} },
      concurrencySafe: false,
      execute: () => {
        stamps.push(performance.now());
        return 'ok';
      },
    }),
  );
  return brood;
}

const runCode = (code) => ({ name: 'run_code', arguments: { description: 'bench', code } });

async function turn(brood, text, what) {
  const agent = await brood.createAgent({ model: ROUTE });
  const started = performance.now();
  const result = await withDeadline(agent.run(text), 120_000, what);
  if (result.stopReason !== 'completed') throw new Error(`${what} ended ${result.stopReason}`);
  return performance.now() - started;
}

function gapsUs(stamps) {
  const gaps = [];
  for (let i = 1; i < stamps.length; i++) gaps.push((stamps[i] - stamps[i - 1]) * 1000);
  const s = summarize(gaps);
  return { calls: stamps.length, p50Us: round(s.p50, 1), p99Us: round(s.p99, 1), meanUs: round(s.mean, 1) };
}

async function sequences({ calls, programs }) {
  const stamps = [];
  const brood = makeRuntime(
    [
      { match: 'warm-up', turns: [{ toolCalls: [runCode(ONE_CALL)] }, { text: 'ok' }] },
      {
        match: 'seq-native',
        turns: [{ toolCalls: Array.from({ length: calls }, () => ({ name: 'noop', arguments: {} })) }, { text: 'ok' }],
      },
      {
        match: 'seq-one-program',
        turns: [
          { toolCalls: [runCode(`for (let i = 0; i < ${calls}; i++) await tools.noop({}); return 1;`)] },
          { text: 'ok' },
        ],
      },
      {
        match: 'seq-many-programs',
        turns: [{ toolCalls: Array.from({ length: programs }, () => runCode(ONE_CALL)) }, { text: 'ok' }],
      },
    ],
    stamps,
  );
  try {
    await turn(brood, 'warm-up', 'run_code warm-up');
    const out = {};
    for (const [name, text] of [
      ['native', 'seq-native'],
      ['program', 'seq-one-program'],
      ['programs', 'seq-many-programs'],
    ]) {
      stamps.length = 0;
      await turn(brood, text, `run_code bench ${name}`);
      out[name] = gapsUs(stamps);
    }
    return out;
  } finally {
    await brood.close();
  }
}

/** First run_code of a fresh runtime (pool thread already warm) vs the same program again. */
async function coldStart(rounds) {
  const cold = [];
  const warm = [];
  for (let i = 0; i < rounds; i++) {
    const brood = makeRuntime(
      [
        { match: 'boot', turns: [{ toolCalls: [{ name: 'noop', arguments: {} }] }, { text: 'ok' }] },
        { match: 'first', turns: [{ toolCalls: [runCode(ONE_CALL)] }, { text: 'ok' }] },
        { match: 'again', turns: [{ toolCalls: [runCode(ONE_CALL)] }, { text: 'ok' }] },
      ],
      [],
    );
    try {
      await turn(brood, 'boot', 'pool boot');
      cold.push(await turn(brood, 'first', 'cold run_code'));
      warm.push(await turn(brood, 'again', 'warm run_code'));
    } finally {
      await brood.close();
    }
  }
  return {
    rounds,
    coldTurnMs: round(median(cold), 2),
    warmTurnMs: round(median(warm), 2),
    coldExtraMs: round(median(cold) - median(warm), 2),
  };
}

export async function runCodeMode({ quick, log }) {
  const seq = await sequences({ calls: quick ? 500 : 2000, programs: quick ? 100 : 400 });
  const cold = await coldStart(quick ? 3 : 5);
  const out = {
    ...seq,
    warmStartUs: round(seq.programs.p50Us - seq.program.p50Us, 1),
    perCallRatio: round(seq.program.p50Us / seq.native.p50Us, 2),
    ...cold,
  };
  log(
    `code mode: native call p50 ${seq.native.p50Us} µs, in-program call p50 ${seq.program.p50Us} µs (${out.perCallRatio}×), ` +
      `next program p50 ${seq.programs.p50Us} µs → warm engine start ≈ ${out.warmStartUs} µs; cold start +${out.coldExtraMs} ms`,
  );
  return out;
}
