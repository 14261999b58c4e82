#!/usr/bin/env node
// Import-graph check run by `npm test`. Three rules:
//
// 1. No import circle (type-only imports included).
// 2. Layers: no import from a lower layer to a higher one. Top to bottom:
//      cli → index → features (delegation, mcp, acp) → runtime → subagents
//      → agents (events, telemetry, approvals) → scheduler → pool (queue: another place drivers run)
//      → thread → driver (code-mode) → wire → leaves (tools, prompt, sessions, models, types,
//      shared modules) → errors
//    A file may import its own layer or any layer below it.
// 3. Sides of the thread boundary. Thread-side code (src/thread/, src/driver/, src/code-mode/ and the
//    thread entries in workers/) runs in pool threads and imports only thread-side and shared code;
//    shared code (src/wire/, src/models/ and the leaf modules listed in SHARED) imports only shared
//    code; the parent imports the driver and Code Mode for types only (it runs drivers through a
//    driver host in src/thread/); the driver does not import node:worker_threads.
//
// Uses TypeScript's own parser, so `import type` and `export … from` are seen exactly as the compiler
// sees them. Every file must be assigned to a layer, and every folder listed here must exist.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');

/** Layer of a source file, highest number = highest layer. A longer prefix wins over a shorter one. */
const LAYERS = [
  ['errors', ['src/errors.ts']],
  [
    'leaves',
    [
      'src/defaults.ts',
      'src/version.ts',
      'src/util/plain.ts',
      'src/util/hand-checks.ts',
      'src/declare.ts',
      'src/util/lazy.ts',
      'src/util/ids.ts',
      'src/util/disposer.ts',
      'src/util/guard.ts',
      'src/util/owned-process.ts',
      'src/util/json-lines.ts',
      'src/types.ts',
      'src/turn-result.ts',
      'src/util/',
      // The vocabularies the Agent names: host events, a run's stream, tool calls and results.
      'src/host-events.ts',
      'src/agent-stream.ts',
      'src/tool-calls.ts',
      'src/content-part.ts',
      'src/comlink-node-adapter.d.ts',
      'src/depth.ts',
      'src/util/describe.ts',
      'src/tool-pool.ts',
      'src/tools/',
      'src/prompt/',
      'src/sessions/',
      'src/models/',
      'src/util/optional-peers.ts',
      'src/util/untrusted.ts',
      'src/util/untrusted-schema.ts',
      'src/util/fifo.ts',
      'src/queue/config.ts',
      'src/scheduler/types.ts',
      'src/scheduler/pace-cell.ts',
      'src/clock.ts',
    ],
  ],
  ['wire', ['src/wire/']],
  ['driver', ['src/driver/', 'src/code-mode/']],
  ['thread', ['src/thread/', 'workers/']],
  // The queue runner is another place drivers run; a `brood host` process runs a worker pool.
  ['pool', ['src/pool/', 'src/queue/']],
  // The admission scheduler's policy and glue: agents and the runtime use it.
  ['scheduler', ['src/scheduler/']],
  // Telemetry builds spans from what agents log; the hub and the agents call into it. Approvals gate agents' calls.
  ['agents', ['src/agents/', 'src/events/', 'src/telemetry/', 'src/approvals/']],
  ['subagents', ['src/subagents/']],
  ['runtime', ['src/runtime/', 'src/brood.ts', 'src/config.ts']],
  ['features', ['src/delegation/', 'src/mcp/', 'src/acp/']],
  ['index', ['src/index.ts', 'src/testing.ts']],
  ['cli', ['src/cli/']],
];

const THREAD_SIDE = ['src/thread/', 'src/driver/', 'src/code-mode/', 'workers/'];
/** Code both sides load. Everything that is neither thread side nor shared is parent side. */
const SHARED = [
  'src/wire/',
  'src/models/',
  'src/errors.ts',
  'src/defaults.ts',
  'src/version.ts',
  'src/util/plain.ts',
  'src/util/hand-checks.ts',
  'src/declare.ts',
  'src/util/lazy.ts',
  'src/util/disposer.ts',
  'src/types.ts',
  // Types src/types.ts re-exports: tool calls and results, host events, how a turn ended.
  'src/tool-calls.ts',
  'src/content-part.ts',
  'src/host-events.ts',
  'src/agent-stream.ts',
  'src/turn-result.ts',
  'src/tool-pool.ts',
  'src/util/fifo.ts',
  // A turn's cancellation: the driver makes one per turn, the parent's turns will too.
  'src/util/lazy-abort.ts',
  // Option snapshots of untrusted objects: the model catalog (shared) reads options through it.
  'src/util/untrusted.ts',
  // The session event vocabulary: drivers emit it, the parent stores and reads it.
  'src/sessions/event-types.ts',
  // createBrood limits and Budget: public types the shared src/types.ts names.
  'src/scheduler/types.ts',
  // A paced provider's schedule in shared memory: the scheduler writes it, drivers take their slots from it.
  'src/scheduler/pace-cell.ts',
  // The one clock (epochNow, Clock): both sides stamp and wait on it.
  'src/clock.ts',
];
/** Parent-side code may import these for types only. */
const TYPES_ONLY_FOR_PARENT = ['src/driver/', 'src/code-mode/'];
/** Modules the driver must not load: it is transport-agnostic (a driver host gives it what it needs). */
const NOT_IN_DRIVER = ['node:worker_threads', 'worker_threads'];

function matches(file, prefixes) {
  return prefixes.some((prefix) => (prefix.endsWith('/') ? file.startsWith(prefix) : file === prefix));
}

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

function sideOf(file) {
  if (matches(file, THREAD_SIDE)) return 'thread';
  if (matches(file, SHARED)) return 'shared';
  return 'parent';
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

/** Every import and re-export of a file: its specifier, and whether it brings in types only. */
function importsOf(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found = [];
  const typeOnlyImport = (clause) => {
    if (clause === undefined) return false; // `import './x.js'` runs the module
    if (clause.isTypeOnly) return true;
    const bindings = clause.namedBindings;
    return (
      clause.name === undefined &&
      bindings !== undefined &&
      ts.isNamedImports(bindings) &&
      bindings.elements.length > 0 &&
      bindings.elements.every((element) => element.isTypeOnly)
    );
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier))
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: typeOnlyImport(node.importClause) });
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    )
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveLocal(file, specifier) {
  const base = relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, '');
  const candidates = [`${base}.ts`, `${base}.d.ts`, `${base}/index.ts`, base];
  return candidates.find((candidate) => {
    try {
      return statSync(join(root, candidate)).isFile();
    } catch {
      return false;
    }
  });
}

const problems = [];
for (const prefix of [...LAYERS.flatMap(([, prefixes]) => prefixes), ...THREAD_SIDE, ...SHARED])
  if (!existsSync(join(root, prefix)))
    problems.push(`${prefix}: listed in scripts/check-imports.mjs but does not exist`);

const files = [...sourceFiles('src'), ...sourceFiles('workers')];
const graph = new Map();
for (const file of files) {
  const edges = [];
  for (const { specifier, typeOnly } of importsOf(file)) {
    if (!specifier.startsWith('.')) {
      if (file.startsWith('src/driver/') && NOT_IN_DRIVER.includes(specifier))
        problems.push(`${file} imports ${specifier}: the driver is transport-agnostic`);
      continue;
    }
    const target = resolveLocal(file, specifier);
    if (target !== undefined) edges.push({ target, typeOnly });
  }
  graph.set(file, edges);
}

for (const file of files) {
  const from = layerOf(file);
  if (from === undefined) {
    problems.push(`${file}: not assigned to a layer (add it to LAYERS in scripts/check-imports.mjs)`);
    continue;
  }
  const side = sideOf(file);
  for (const { target, typeOnly } of graph.get(file)) {
    const to = layerOf(target);
    if (to !== undefined && to.index > from.index)
      problems.push(`${file} (${from.name}) imports ${target} (${to.name}): a lower layer imports a higher one`);
    const targetSide = sideOf(target);
    if (side === 'thread' && targetSide === 'parent')
      problems.push(`${file} (thread side) imports ${target} (parent side)`);
    if (side === 'shared' && targetSide !== 'shared')
      problems.push(`${file} (shared) imports ${target} (${targetSide} side): shared code imports shared code only`);
    if (side === 'parent' && !typeOnly && matches(target, TYPES_ONLY_FOR_PARENT))
      problems.push(`${file} (parent side) imports ${target} at run time: the parent imports it for types only`);
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
  for (const { target } of graph.get(file) ?? []) visit(target, path);
  path.pop();
  seen.add(file);
}
for (const file of files) visit(file, []);

if (problems.length > 0) {
  console.error(`import check: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
const count = (side) => files.filter((file) => sideOf(file) === side).length;
console.log(
  `import check: ${files.length} files (${count('parent')} parent side, ${count('thread')} thread side, ` +
    `${count('shared')} shared), no circles, layers respected, the thread side imports no parent-side code, ` +
    'the parent imports the driver and Code Mode for types only',
);
