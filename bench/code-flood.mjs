// Standalone (not part of `npm run bench`): a run_code program that floods its tool
// calls, beside a sibling agent's trivial program on the same pool thread (pool of one).
//   node --expose-gc bench/code-flood.mjs [rounds] [variant]
// Variants:
//   limit  1,001 calls of a tool returning 512 KB started at once: the 1,001st trips maxToolCalls
//   taken  1,000 such calls, then awaits the last ones: results stream to a program holding them
//          all, until it hits its memory limit
// Per round: the sibling's program alone (baseline), then the flood and the sibling started together.
// Reports the flood's outcome, the sibling's latency, tool bodies started, the parent's RSS growth
// (peak, sampled every 10 ms, after a forced GC) and its event-loop delay; then medians.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createBrood, scriptedModels } from '../dist/index.js';
import { noopTool, ROUTE } from './lib/brood.mjs';

const rounds = Number(process.argv[2] ?? 5);
const variant = process.argv[3] ?? 'limit';
const FLOODS = {
  limit:
    'const all = []; for (let i = 0; i < 1001; i++) all.push(tools.big({})); await Promise.all(all); return "all";',
  taken:
    'const all = []; for (let i = 0; i < 999; i++) all.push(tools.big({})); await tools.big({}); await tools.big({}); return "all";',
};
const runCode = (code) => ({ name: 'run_code', arguments: { description: 'flood', code } });
const brood = createBrood({
  codeMode: 'code',
  pool: { threads: 1 },
  models: [
    scriptedModels({
      id: 'scripted',
      scripts: [
        { match: 'flood', turns: [{ toolCalls: [runCode(FLOODS[variant])] }, { text: '{{results}}' }] },
        {
          match: 'trivial',
          turns: [{ toolCalls: [runCode('return await tools.tiny({});')] }, { text: '{{results}}' }],
        },
      ],
    }),
  ],
});
const BIG = 'x'.repeat(512 * 1024);
let started = 0;
brood.tools.register(
  noopTool({
    name: 'big',
    description: 'returns 512 KB',
    execute: async () => {
      started += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return BIG;
    },
  }),
);
brood.tools.register(noopTool({ name: 'tiny', description: 'returns a word', execute: () => 'tiny' }));

const agent = () => brood.createAgent({ model: ROUTE });
const timed = async (run) => {
  const t0 = performance.now();
  const result = await run;
  return [result, Math.round(performance.now() - t0)];
};

// Two programs at once start the pool thread's two sandbox threads before anything is measured.
await Promise.all([await agent(), await agent()].map((a) => a.run('trivial')));
const rows = [];
for (let round = 0; round < rounds; round++) {
  const [, aloneMs] = await timed((await agent()).run('trivial'));
  globalThis.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  started = 0;
  const [flooding, sibling] = [await agent(), await agent()];
  const [[flood, floodMs], [served, siblingMs]] = await Promise.all([
    timed(flooding.run('flood')),
    timed(sibling.run('trivial')),
  ]);
  clearInterval(sampler);
  loop.disable();
  rows.push({
    flood:
      flood.stopReason === 'completed'
        ? flood.output.split('\n')[0].slice(0, 70)
        : `${flood.stopReason}: ${flood.diagnostic}`,
    siblingOk: served.output === 'tiny',
    aloneMs,
    siblingMs,
    floodMs,
    toolStarts: started,
    rssGrowthMb: Math.round((peak - base) / 2 ** 20),
    loopMaxMs: Math.round(loop.max / 1e6),
  });
  console.log(JSON.stringify(rows.at(-1)));
}
const median = (key) => rows.map((row) => row[key]).sort((a, b) => a - b)[Math.floor(rows.length / 2)];
const keys = ['aloneMs', 'siblingMs', 'floodMs', 'toolStarts', 'rssGrowthMb', 'loopMaxMs'];
console.log(
  `median of ${rows.length} (${variant}):`,
  JSON.stringify(Object.fromEntries(keys.map((k) => [k, median(k)]))),
);
await brood.close();
