// Summarises the .cpuprofile files `node --cpu-prof` wrote (one per thread: the main thread's has
// thread id 0 in its name, each pool thread's its own): top self-time functions per file, and per
// child in µs when told how many children the profiled runs delegated in all.
// With --windows <file> (a JSON list of [fromUs, toUs] on the profiles' clock, as
// BENCH_FOLLOWUP_WINDOWS writes it) only the samples inside those windows count.
//   node bench/profile-top.mjs <dir> [--children N] [--top 15] [--windows file]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const dir = args[0];
const children = option('--children', 0);
const top = option('--top', 15);
const windowsAt = args.indexOf('--windows');
const windows = windowsAt >= 0 ? JSON.parse(readFileSync(args[windowsAt + 1], 'utf8')) : undefined;
const inWindow = (us) => !windows || windows.some(([from, to]) => us >= from && us <= to);

/** Self ms per function (name + file:line), from the samples and their time deltas. */
function selfTimes(profile) {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  let totalUs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (!inWindow(at)) return;
    totalUs += us;
    const { functionName, url, lineNumber } = byNode.get(id).callFrame;
    const file = url ? url.replace(/^.*\/(dist|node_modules|bench)\//, '$1/') : '';
    const key = `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + us);
  });
  return { self, totalUs };
}

const files = readdirSync(dir)
  .filter((name) => name.endsWith('.cpuprofile'))
  .sort();
for (const name of files) {
  const { self, totalUs } = selfTimes(JSON.parse(readFileSync(join(dir, name), 'utf8')));
  const idle = self.get('(idle)') ?? 0;
  const busyMs = (totalUs - idle) / 1000;
  const perChild = (us) => (children > 0 ? ` ${(us / children).toFixed(1).padStart(7)} µs/child` : '');
  console.log(
    `\n${name}: ${busyMs.toFixed(0)} ms busy of ${(totalUs / 1000).toFixed(0)} ms sampled${perChild(totalUs - idle)}`,
  );
  const rows = [...self].filter(([key]) => key !== '(idle)').sort((a, b) => b[1] - a[1]);
  for (const [key, us] of rows.slice(0, top))
    console.log(
      `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / (totalUs - idle)).toFixed(1).padStart(5)} %${perChild(us)}  ${key}`,
    );
}
