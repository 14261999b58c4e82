// Crash-resume costs (docs/sessions.md "Crash resume"), reported, never asserted:
// (a) the latency-only fan-out (N = 256, P = 64, C = 0, worker runner) on fileSessions with write before
//     effect (a tool body starts once its `tool/call` is written) vs without it (a store wrapper whose
//     append resolves at once, so nothing waits for the file: the ordering before write before effect),
//     and with `sync: 'step'` (an fsync before each tool body and after each model answer);
// (b) recovery of a 1,000-child tree: a child process runs it on fileSessions against a loopback model
//     server in this process and is SIGKILLed mid-run; this process then calls recover(). Measured: the
//     time from recover() to every interrupted child running again (its `recovered` event), and the
//     model requests of both processes against the uninterrupted run's plus the ones in flight at the kill.
// Standalone: node --expose-gc bench/crash-resume.mjs [--quick] [--only ordering|recovery]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as broodPkg from '../dist/index.js';
import { installDelegation, makeBrood, noopTool, timedRun } from './lib/brood.mjs';
import { attempt, withDeadline } from './lib/run-guard.mjs';
import { childTurns, idealMs, L, parentTurns, THREADS } from './lib/schedule.mjs';
import { median, round } from './lib/stats.mjs';

const { createBrood, fileSessions, openAICompatible, subagentTool, defineTool } = broodPkg;
const SELF = fileURLToPath(import.meta.url);
const FANOUT = { n: 256, p: 64, cpuMs: 0 };
const TREE_CHILDREN = 1000;

// ---------------------------------------------------------------------------------------------- (a)

const rootPrompt = (n) => `crash-resume-root n=${n};`;

function fanoutScripts() {
  return [16, FANOUT.n]
    .map((n) => ({
      match: rootPrompt(n),
      latencyMs: L,
      turns: parentTurns(n, 'subagent', (i) => ({ description: `child ${i}`, prompt: `cr-child #${i}` })),
    }))
    .concat([{ match: 'cr-child ', latencyMs: L, turns: childTurns }]);
}

/** fileSessions whose appends resolve at once (the write goes on behind): nothing waits for the file. */
function unorderedSessions(store) {
  return {
    create: (header) => store.create(header),
    append(id, events) {
      store.append(id, events).catch(() => undefined);
      return Promise.resolve();
    },
    flush: (id) => store.flush(id),
    read: (id) => store.read(id),
    list: () => store.list(),
    acquire: (id) => store.acquire(id),
    release: (id) => store.release(id),
    close: () => store.close(),
  };
}

const ORDERINGS = {
  'write before effect': (dir) => fileSessions(dir),
  'no ordering': (dir) => unorderedSessions(fileSessions(dir)),
  "sync: 'step'": (dir) => fileSessions(dir, { sync: 'step' }),
};

async function orderingRows({ quick, log }) {
  const reps = quick ? 1 : 5;
  const dirs = [];
  const broods = {};
  const stores = [];
  for (const [name, sessionsOf] of Object.entries(ORDERINGS)) {
    const dir = mkdtempSync(join(tmpdir(), 'brood-bench-cr-'));
    dirs.push(dir);
    const sessions = sessionsOf(dir);
    stores.push(sessions);
    const brood = makeBrood({
      runner: 'worker',
      scripts: fanoutScripts(),
      maxParallelToolCalls: FANOUT.p,
      threads: THREADS,
      sessions,
    });
    brood.tools.register(noopTool());
    installDelegation(brood);
    await timedRun(brood, rootPrompt(16), `crash-resume warm-up (${name})`);
    broods[name] = brood;
  }
  // One untimed run at the measured size each: the process's first N = 256 run pays for compiling its
  // code paths, and would count against whichever ordering ran first.
  for (const name of Object.keys(ORDERINGS))
    await timedRun(broods[name], rootPrompt(FANOUT.n), `crash-resume warm-up N=${FANOUT.n} (${name})`);
  const samples = Object.fromEntries(Object.keys(ORDERINGS).map((name) => [name, []]));
  try {
    // Interleaved, so background load on a shared machine hits every ordering alike; the order turns
    // each round, so no ordering always runs right after the same other one (and its leftover work).
    const names = Object.keys(ORDERINGS);
    for (let i = 0; i < reps; i++)
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length];
        samples[name].push(await timedRun(broods[name], rootPrompt(FANOUT.n), `fan-out N=${FANOUT.n} (${name})`));
      }
  } finally {
    await Promise.all(Object.values(broods).map((b) => b.close()));
    await Promise.all(stores.map((store) => store.close()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  const makespan = Object.fromEntries(Object.entries(samples).map(([name, ms]) => [name, round(median(ms), 1)]));
  const base = makespan['no ordering'];
  const result = {
    ...FANOUT,
    idealMs: idealMs(FANOUT),
    reps,
    makespanMs: makespan,
    samplesMs: Object.fromEntries(Object.entries(samples).map(([name, ms]) => [name, ms.map((v) => round(v, 1))])),
    orderedRatio: round(makespan['write before effect'] / base, 3),
    stepRatio: round(makespan["sync: 'step'"] / base, 3),
  };
  log(
    `crash-resume fan-out N=${FANOUT.n} P=${FANOUT.p}: ${JSON.stringify(makespan)} (write before effect ${result.orderedRatio}×, step ${result.stepRatio}×)`,
  );
  return result;
}

// ---------------------------------------------------------------------------------------------- (b)

/** Loopback Chat Completions: the root asks for `children` subagent calls; a child calls noop, then answers. */
function treeServer(children) {
  const counts = { sent: 0 };
  const waiters = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      counts.sent += 1;
      for (const waiter of waiters.splice(0)) waiter();
      const body = JSON.parse(raw);
      const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const step = body.messages.filter((m) => m.role === 'assistant').length;
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const chunk of treeReply(prompt, step, children)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        res.end('data: [DONE]\n\n');
      }, L);
    });
  });
  const reached = (sent) =>
    new Promise((resolve) => {
      const check = () => (counts.sent >= sent ? resolve() : waiters.push(check));
      check();
    });
  return { server, counts, reached };
}

function treeReply(prompt, step, children) {
  const chunk = (delta, finish = null) => ({
    id: 'chatcmpl-cr',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const usage = { choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } };
  const calls = (list) => [
    chunk({
      role: 'assistant',
      tool_calls: list.map(([name, args], index) => ({
        index,
        id: `call_${step}_${index}`,
        type: 'function',
        function: { name, arguments: JSON.stringify(args) },
      })),
    }),
    chunk({}, 'tool_calls'),
    usage,
  ];
  const text = (content) => [chunk({ role: 'assistant', content }), chunk({}, 'stop'), usage];
  if (prompt === 'cr-tree root') {
    if (step > 0) return text('tree done');
    return calls(
      Array.from({ length: children }, (_, i) => ['subagent', { description: `c${i}`, prompt: `leaf ${i}` }]),
    );
  }
  return step === 0 ? calls([['noop', {}]]) : text(`${prompt} done`);
}

/** The tree's runtime and its store (which the caller closes after the runtime). */
function treeRuntime(dir, baseURL) {
  const sessions = fileSessions(dir);
  const brood = createBrood({
    sessions,
    maxParallelToolCalls: TREE_CHILDREN,
    models: [openAICompatible({ id: 'loop', baseURL, models: ['m'], acceptsUnlistedModels: true })],
  });
  brood.use(subagentTool({ provider: 'spawn', enableRunInBackground: false }));
  brood.tools.register(
    defineTool({
      name: 'noop',
      description: 'does nothing',
      parameters: { type: 'object', properties: {} },
      concurrencySafe: true,
      idempotent: true,
      execute: () => 'ok',
    }),
  );
  return { brood, sessions };
}

/** The killed process: runs the tree until SIGKILLed. */
async function treeChild(dir, baseURL) {
  const { brood } = treeRuntime(dir, baseURL);
  const root = await brood.createAgent({ model: { provider: 'loop', model: 'm' } });
  await root.run('cr-tree root');
}

async function listen(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}/v1`;
}

/** The uninterrupted run's requests: the root's two, and two per child. */
const uninterruptedRequests = (children) => 2 + 2 * children;

async function recoveryRow({ log }) {
  const children = TREE_CHILDREN;
  const dir = mkdtempSync(join(tmpdir(), 'brood-bench-cr-tree-'));
  const { server, counts, reached } = treeServer(children);
  const baseURL = await listen(server);
  try {
    const child = spawn(process.execPath, [SELF, '--tree-child', dir, baseURL], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise((resolve) => child.on('close', resolve));
    // Kill once the root's answer is in and about half the children have asked their second question.
    await withDeadline(
      Promise.race([reached(1 + children + children / 2), exited.then(() => Promise.reject(new Error(stderr)))]),
      120_000,
      'the tree reaching its kill point',
    );
    child.kill('SIGKILL');
    await exited;
    const beforeKill = counts.sent;
    const { brood, sessions } = treeRuntime(dir, baseURL);
    const resumedAt = new Map();
    let t0 = 0;
    const events = (async () => {
      for await (const event of brood.events())
        if (event.type === 'recovered' && !resumedAt.has(event.agentId))
          resumedAt.set(event.agentId, performance.now() - t0);
    })();
    const { interrupted, loggedAnswers } = await scanLog(dir);
    // In flight at the kill: sent, its answer not in the log (answered by the server but not yet
    // logged counts too: the killed process never had it).
    const inFlightAtKill = beforeKill - loggedAnswers;
    t0 = performance.now();
    const recovered = await brood.recover();
    const recoverResolvedMs = performance.now() - t0;
    const results = await withDeadline(Promise.all(recovered.map((r) => r.result)), 120_000, 'the recovered tree');
    const times = [...interrupted].map((id) => resumedAt.get(id)).filter((ms) => ms !== undefined);
    await brood.close();
    await sessions.close();
    await events;
    const row = {
      children,
      interruptedAgents: interrupted.size,
      resumedAgents: times.length,
      allRunningAgainMs: times.length > 0 ? round(Math.max(...times), 1) : null,
      firstRunningAgainMs: times.length > 0 ? round(Math.min(...times), 1) : null,
      medianRunningAgainMs: times.length > 0 ? round(median(times), 1) : null,
      // recover() resolves once every session is read and every top-level agent restored.
      recoverResolvedMs: round(recoverResolvedMs, 1),
      rootStopReason: results[0]?.stopReason ?? null,
      requestsBeforeKill: beforeKill,
      inFlightAtKill,
      totalRequests: counts.sent,
      uninterruptedRequests: uninterruptedRequests(children),
      requestBound: uninterruptedRequests(children) + inFlightAtKill,
    };
    log(
      `crash-resume recovery of ${children} children: ${row.resumedAgents}/${row.interruptedAgents} interrupted agents running again within ${row.allRunningAgainMs} ms; requests ${row.totalRequests} (bound ${row.requestBound})`,
    );
    return row;
  } finally {
    await new Promise((resolve) => server.close(resolve));
    server.closeAllConnections?.();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The sessions whose last turn started and never ended (what recover() resumes), and the answers logged. */
async function scanLog(dir) {
  const store = fileSessions(dir);
  const interrupted = new Set();
  let loggedAnswers = 0;
  try {
    for (const header of await store.list()) {
      const { events } = await store.read(header.id);
      const count = (type) => events.filter((e) => e.type === type).length;
      if (count('turn/start') > count('turn/end')) interrupted.add(header.id);
      loggedAnswers += count('assistant/message');
    }
  } finally {
    await store.close();
  }
  return { interrupted, loggedAnswers };
}

/** `only`: 'ordering' or 'recovery' to run one of the two (standalone `--only <name>`). */
export async function runCrashResume({ quick, log, only }) {
  return {
    ...(only === 'recovery' ? {} : { ordering: await attempt(() => orderingRows({ quick, log })) }),
    ...(only === 'ordering' ? {} : { recovery: await attempt(() => recoveryRow({ log })) }),
  };
}

if (process.argv[1] === SELF) {
  if (process.argv[2] === '--tree-child') {
    await treeChild(process.argv[3], process.argv[4]);
  } else {
    const log = (line) => console.log(line);
    const onlyAt = process.argv.indexOf('--only');
    const only = onlyAt >= 0 ? process.argv[onlyAt + 1] : undefined;
    console.log(JSON.stringify(await runCrashResume({ quick: process.argv.includes('--quick'), log, only }), null, 2));
    process.exit(0);
  }
}
