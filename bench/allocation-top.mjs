// Summarises sampled allocation profiles (bench/lib/pool-probe.cjs writes one per pool thread):
// bytes allocated per function (the allocating frame, inlined callees included), per child when told
// how many children the sampled window ran on that thread.
//   node bench/allocation-top.mjs <profile.json ...> [--children N] [--top 30]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const children = option('--children', 1);
const top = option('--top', 30);
const files = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));

for (const file of files) {
  const bytes = new Map();
  let total = 0;
  const walk = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.split('/').at(-1)}:${lineNumber + 1}`;
    total += node.selfSize;
    if (node.selfSize > 0) bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(JSON.parse(readFileSync(file, 'utf8')).head);
  console.log(`\n${file}: ${(total / children / 1024).toFixed(1)} KB allocated per child`);
  for (const [name, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(
      `${(size / children).toFixed(0).padStart(8)} B/child  ${((100 * size) / total).toFixed(1).padStart(5)} %  ${name}`,
    );
}
