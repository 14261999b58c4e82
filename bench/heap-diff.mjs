// Compares two V8 heap snapshots (`v8.getHeapSnapshot()` in the parent, `v8.writeHeapSnapshot()` from a
// module adapter inside a pool thread): what the second holds more of, by kind and constructor, per
// child when told how many children the difference is. Used to find what each running or parked
// child retains (a snapshot is taken after a full GC, so only live objects count).
//   node bench/heap-diff.mjs <before.heapsnapshot> <after.heapsnapshot> [--children N] [--top 30]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const [before, after] = args;
const children = option('--children', 1);
const top = option('--top', 30);

/** Self bytes and object count per group: strings, code and numbers together, closures by name, objects by constructor. */
function groups(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snapshot.snapshot.meta.node_fields;
  const kinds = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const [type, name, size] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field));
  const out = new Map();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const kind = kinds[snapshot.nodes[i + type]];
    const label = kind.includes('string')
      ? '(string)'
      : ['code', 'number', 'object shape'].includes(kind)
        ? `(${kind})`
        : `${kind}: ${snapshot.strings[snapshot.nodes[i + name]]}`.slice(0, 80);
    const group = out.get(label) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += snapshot.nodes[i + size];
    out.set(label, group);
  }
  return out;
}

const a = groups(before);
const b = groups(after);
const total = (g) => [...g.values()].reduce((sum, { bytes }) => sum + bytes, 0);
console.log(
  `${(total(a) / 2 ** 20).toFixed(1)} MB → ${(total(b) / 2 ** 20).toFixed(1)} MB: ${((total(b) - total(a)) / children / 1024).toFixed(2)} KB per child`,
);
const rows = [...b].map(([label, { count, bytes }]) => {
  const was = a.get(label) ?? { count: 0, bytes: 0 };
  return { label, count: (count - was.count) / children, bytes: (bytes - was.bytes) / children };
});
rows.sort((x, y) => y.bytes - x.bytes);
for (const row of rows.slice(0, top))
  console.log(`${row.bytes.toFixed(0).padStart(8)} B ${row.count.toFixed(2).padStart(8)} objects  ${row.label}`);
