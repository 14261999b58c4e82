// Splits a `perf` profile of bench/profile-fanout.mjs by thread group (main / the runtime's pool /
// V8's helpers and libuv) and by what the samples were doing, inside the timed runs' window only:
// the C++ half of the wide fan-out's profile (the collectors and the optimizing compiler run in
// V8's helper threads, where --cpu-prof does not look). Linux, `perf` installed:
//   BENCH_PERF_GROUPS=/tmp/groups.json perf record -k CLOCK_MONOTONIC -F 999 -o /tmp/fanout.perf -- \
//     node --expose-gc bench/profile-fanout.mjs worker 10000 10000 1 0 1000
//   perf script -i /tmp/fanout.perf -F tid,time,ip,sym,dso > /tmp/fanout.txt
//   node bench/perf-threads.mjs /tmp/fanout.txt /tmp/groups.json
import { readFileSync } from 'node:fs';

const KINDS = ['js', 'gc', 'compile', 'v8', 'native', 'kernel'];
const GROUPS = ['main', 'started', 'background', 'ended'];
const GROUP_NAMES = {
  main: 'main',
  started: 'pool',
  background: 'V8 helpers, libuv',
  ended: 'threads gone by the end',
};

/**
 * What one sample was doing, from its symbol and object: JavaScript (JIT code lives in no file, or
 * in the `/tmp/perf-<pid>.map` perf looks for; the interpreter and ICs are `Builtins_`), a collector
 * (write barriers and allocation slow paths included), the compiler (parsing, bytecode, TurboFan),
 * the rest of V8's runtime, other native code (Node, libuv, libc) or the kernel.
 */
function kindOf(symbol, dso) {
  if (dso.includes('kernel')) return 'kernel';
  if (!dso.startsWith('/') || /\/perf-\d+\.map$/.test(dso) || symbol.startsWith('Builtins_')) return 'js';
  if (/compiler::|Compil|Parser|Bytecode|Maglev|Baseline|Zone/.test(symbol)) return 'compile';
  if (/Scaveng|Mark|Sweep|Evacuat|Compact|Heap::|GC|Remembered|Slot|Visit|Promot|Worklist|Page/.test(symbol))
    return 'gc';
  if (symbol.startsWith('v8::')) return 'v8';
  return 'native';
}

const SAMPLE = /^\s*(\d+)\s+([\d.]+):\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$/;

function tally(lines, groups, [from, to]) {
  const counts = Object.fromEntries(GROUPS.map((g) => [g, Object.fromEntries(KINDS.map((k) => [k, 0]))]));
  for (const line of lines) {
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const [, tid, time, symbol, dso] = m;
    const at = Number(time);
    if (at < from || at > to) continue;
    counts[groups[tid] ?? 'ended'][kindOf(symbol, dso)]++;
  }
  return counts;
}

function main() {
  const [scriptFile, groupsFile] = process.argv.slice(2);
  if (!scriptFile || !groupsFile) {
    console.error('usage: node bench/perf-threads.mjs <perf script output> <groups.json>');
    process.exit(2);
  }
  const { runner, children, window, groups } = JSON.parse(readFileSync(groupsFile, 'utf8'));
  const counts = tally(readFileSync(scriptFile, 'utf8').split('\n'), groups, window);
  const all = Object.values(counts).reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b, 0), 0);
  console.log(
    `${runner}, ${children} children, ${((window[1] - window[0]) * 1000).toFixed(0)} ms window, ${all} samples`,
  );
  console.log(`samples per thread group and kind (share of the group's samples); at -F 999 a sample is ~1 ms of CPU`);
  console.log(['group', 'samples', ...KINDS].join(' | '));
  for (const group of GROUPS) {
    const c = counts[group];
    const total = Object.values(c).reduce((a, b) => a + b, 0);
    if (total === 0) continue;
    const share = (k) => `${c[k]} (${((100 * c[k]) / total).toFixed(0)} %)`;
    console.log([GROUP_NAMES[group], total, ...KINDS.map(share)].join(' | '));
  }
}

main();
