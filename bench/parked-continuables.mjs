// SPEC §12 parked continuables: start many continuable children, let each finish its first turn and
// go idle (an idle continuable child holds no worker capacity), then read RSS after GC.
//
// The children are started from inside a tool the parent is running, with the parent's turn still
// open: each child's settlement notice then queues in the parent's inbox instead of waking it for
// thousands of turns, which would measure the parent's history, not parked children.
import { ROUTE, makeBrood, noopTool } from './lib/brood.mjs';
import { THREADS } from './lib/schedule.mjs';
import { gc, round, sleep } from './lib/stats.mjs';
import { limited } from './floor.mjs';
import { withDeadline } from './lib/run-guard.mjs';

const mem = () => ({ rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed });

export async function runParkedContinuables({ quick, log }) {
  const count = quick ? 500 : 5000;
  const warmCount = quick ? 500 : 2500;
  const brood = makeBrood({
    runner: 'worker',
    threads: THREADS,
    scripts: [
      { match: 'park-all', turns: [{ toolCalls: [{ name: 'park', arguments: {} }] }, { text: 'done' }] },
      { match: 'parked-child', turns: [{ text: 'parked' }] },
    ],
  });
  const ended = new Set();
  brood.subagents.on('end', (e) => ended.add(e.id));
  let report;
  const measured = new Promise((resolve) => (report = resolve));
  brood.tools.register(
    noopTool({
      name: 'park',
      execute: async (_args, ctx) => {
        const signal = new AbortController().signal;
        const park = async (n, from) => {
          const ids = [];
          await limited(n, 32, async (i) => {
            const request = { parent: ctx.agent, prompt: `parked-child ${from + i}` };
            ids.push(
              (
                await brood.subagents.startContinuable({
                  provider: 'spawn',
                  label: `parked ${from + i}`,
                  request,
                  signal,
                })
              ).childId,
            );
          });
          while (ids.some((id) => !ended.has(id))) await sleep(20); // every child has finished its turn and parked
        };
        // The baseline is a warm runtime with children already parked, so the figure is what one more
        // parked child costs. Measured: the first ~2,500 activations also grow each pool thread's V8 heap
        // from ~17 to ~42 MB (its young generation reaching full size; the live heap stays ~7.7 MB), a
        // one-time cost reported as warmupRssGrowthMb, after which RSS grows linearly per parked child.
        const settle = async () => {
          gc();
          await sleep(200); // let worker threads settle too (gc() only collects this isolate)
          gc();
        };
        await settle();
        const start = mem();
        await park(warmCount, 0);
        await settle();
        const before = mem();
        const t0 = performance.now();
        await park(count, warmCount);
        const startMs = performance.now() - t0;
        await settle();
        const after = mem();
        report({ start, before, after, startMs });
        return 'parked';
      },
    }),
  );
  const parent = await brood.createAgent({ model: ROUTE });
  void parent.run('park-all'); // the turn stays open inside `park` until close() cancels it
  const { start, before, after, startMs } = await withDeadline(measured, 600_000, 'parking children');
  await brood.close();
  const kb = (b) => b / 1024;
  const out = {
    children: count,
    parkedBeforeBaseline: warmCount,
    warmupRssGrowthMb: round((before.rss - start.rss) / 1024 / 1024, 1),
    // What the figure was until the marginal method: growth over the first children, one-time costs included.
    firstRssPerChildKb: round(kb(before.rss - start.rss) / warmCount, 1),
    rssPerChildKb: round(kb(after.rss - before.rss) / count, 1),
    heapPerChildKb: round(kb(after.heap - before.heap) / count, 1),
    rssGrowthMb: round((after.rss - before.rss) / 1024 / 1024, 1),
    startAllMs: round(startMs, 0),
    gcExposed: typeof globalThis.gc === 'function',
  };
  log(
    `parked continuables: ${count} children, ${out.rssPerChildKb} KB RSS each (${out.heapPerChildKb} KB main heap), started+parked in ${out.startAllMs} ms`,
  );
  return out;
}
