#!/usr/bin/env node
// Import-graph check run by `npm test`: no import circle (type-only imports included) and no import
// from a lower layer to a higher one. Layers, top to bottom:
//   cli → index → features (delegation, mcp, acp) → runtime → subagents → agents → workers → driver
//   → registries (tools, prompt, sessions, models, shared leaves) → errors
// A file may import its own layer or any layer below it. Uses TypeScript's own pre-processor, so
// `import type` and `export … from` are seen exactly as the compiler sees them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');

/** Layer of a source file, highest number = highest layer. Unknown files fail the check loudly. */
const LAYERS = [
  ['errors', ['src/errors.ts']],
  [
    'registries',
    [
      'src/defaults.ts',
      'src/plain.ts',
      'src/hand-checks.ts',
      'src/ids.ts',
      'src/disposer.ts',
      'src/guard.ts',
      'src/owned-process.ts',
      'src/json-lines.ts',
      'src/types.ts',
      'src/comlink-node-adapter.d.ts',
      'src/tools/',
      'src/prompt/',
      'src/sessions/',
      'src/models/',
      'src/depth.ts',
      'src/describe.ts',
      'src/optional-peers.ts',
      'src/untrusted.ts',
      'src/queue/config.ts',
    ],
  ],
  ['driver', ['src/driver/', 'src/sandbox/']],
  // Transports sit beside the worker runner: the queue runner is another place drivers run.
  ['workers', ['src/workers/', 'src/wire/', 'workers/', 'src/queue/']],
  ['agents', ['src/agents/', 'src/events/']],
  ['subagents', ['src/subagents/']],
  ['runtime', ['src/runtime/', 'src/brood.ts', 'src/config.ts']],
  ['features', ['src/delegation/', 'src/mcp/', 'src/acp/']],
  ['index', ['src/index.ts', 'src/testing.ts']],
  ['cli', ['src/cli/']],
];

function layerOf(file) {
  let best;
  for (const [index, [name, prefixes]] of LAYERS.entries()) {
    for (const prefix of prefixes) {
      const hit = prefix.endsWith('/') ? file.startsWith(prefix) : file === prefix;
      if (hit && (best === undefined || prefix.length > best.prefix.length)) best = { index, name, prefix };
    }
  }
  return best;
}

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(join(root, dir))) {
    const path = join(dir, entry);
    if (statSync(join(root, path)).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|cts)$/.test(entry)) out.push(path);
  }
  return out;
}

function localImports(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const { importedFiles } = ts.preProcessFile(text, true, true);
  const targets = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const base = relative(root, resolve(root, dirname(file), fileName)).replace(/\.js$/, '');
    const candidates = [`${base}.ts`, `${base}.d.ts`, `${base}/index.ts`, base];
    const found = candidates.find((candidate) => {
      try {
        return statSync(join(root, candidate)).isFile();
      } catch {
        return false;
      }
    });
    if (found !== undefined) targets.push(found);
  }
  return targets;
}

const files = [...sourceFiles('src'), ...sourceFiles('workers')];
const graph = new Map(files.map((file) => [file, localImports(file)]));
const problems = [];

for (const file of files) {
  const from = layerOf(file);
  if (from === undefined) {
    problems.push(`${file}: not assigned to a layer (add it to LAYERS in scripts/check-imports.mjs)`);
    continue;
  }
  for (const target of graph.get(file)) {
    const to = layerOf(target);
    if (to !== undefined && to.index > from.index)
      problems.push(`${file} (${from.name}) imports ${target} (${to.name}): a lower layer imports a higher one`);
  }
}

// Circles: depth-first search with an explicit path; each circle reported once by its sorted members.
const seen = new Set();
const reported = new Set();
function visit(file, path) {
  const at = path.indexOf(file);
  if (at >= 0) {
    const circle = path.slice(at);
    const key = [...circle].sort().join(' ');
    if (!reported.has(key)) {
      reported.add(key);
      problems.push(`import circle: ${[...circle, file].join(' → ')}`);
    }
    return;
  }
  if (seen.has(file)) return;
  path.push(file);
  for (const target of graph.get(file) ?? []) visit(target, path);
  path.pop();
  seen.add(file);
}
for (const file of files) visit(file, []);

if (problems.length > 0) {
  console.error(`import check: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`import check: ${files.length} files, no circles, layers respected`);
