// Issue 33: governed fan-out. Three rows, all through the real runtime:
//  - rateLimited: N children × 2 requests (50 ms each) through the real openAICompatible adapter against a
//    loopback Chat Completions server that enforces its own limits (32 concurrent, 100 requests/s, no
//    burst; 429 + retry-after-ms beyond them). limits.providers matching the server, 25 % too high, unset.
//    Reported: makespan ÷ the limit-bound ideal (2N requests at 100/s), 429s received, failed children.
//  - deepCapped: depth 3, branching 8 (585 agents) under limits.agents 16: completes (no deadlock);
//    makespan ÷ (585 × latency ÷ 16).
//  - unlimitedOverhead: N=256 P=64 scripted fan-out with no limits and with an unreachable limit set
//    (every request then asks for admission), interleaved; the ratio of medians.
//   node bench/governed.mjs [--quick]
import { createServer } from 'node:http';
import { createBrood, defineTool, openAICompatible, scriptedModels, subagentTool } from '../dist/index.js';
import { round } from './lib/stats.mjs';

const LATENCY_MS = 50;
const SERVER = { concurrent: 32, perSecond: 100 };
const TOLERANCE_MS = 1000 / SERVER.perSecond / 2;

/** A Chat Completions server with a fixed latency that enforces its own concurrency and rate (GCRA, no burst). */
async function limitedServer() {
  const counts = { throttled: 0, inFlight: 0, maxInFlight: 0, requests: 0 };
  const spacing = 1000 / SERVER.perSecond;
  let nextAllowed = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const now = performance.now();
      // One request per `spacing` ms, with half a spacing of tolerance for arrival jitter (still no burst).
      const early = now < nextAllowed - TOLERANCE_MS;
      if (early || counts.inFlight >= SERVER.concurrent) {
        counts.throttled += 1;
        const wait = early ? Math.ceil(nextAllowed - now) : LATENCY_MS;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': String(wait) });
        res.end('{"error":{"message":"rate limited"}}');
        return;
      }
      nextAllowed = Math.max(nextAllowed, now) + spacing;
      counts.requests += 1;
      counts.inFlight += 1;
      counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
      const body = JSON.parse(raw);
      const answered = body.messages.some((m) => m.role === 'tool');
      setTimeout(() => {
        counts.inFlight -= 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(answered)));
      }, LATENCY_MS);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${server.address().port}/v1`,
    counts,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function completion(answered) {
  const message = answered
    ? { role: 'assistant', content: 'done' }
    : {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'note', arguments: '{}' } }],
      };
  return {
    id: 'x',
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }],
    usage: { prompt_tokens: 40, completion_tokens: 8 },
  };
}

const delegate = (i) => ({ name: 'subagent', arguments: { description: `c${i}`, prompt: `child ${i}` } });
/** The lead of every fan-out here: `n` children in one message, then `ok`. */
const fanOut = (n) => ({
  match: 'fan out',
  turns: [{ toolCalls: Array.from({ length: n }, (_, i) => delegate(i)) }, { text: 'ok' }],
});

async function rateLimitedCase(n, limits) {
  const server = await limitedServer();
  const brood = createBrood({
    maxParallelToolCalls: n,
    ...(limits ? { limits } : {}),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [fanOut(n)],
      }),
      openAICompatible({ id: 'loop', baseURL: server.baseURL, apiKey: 'bench', models: ['m'], stream: false }),
    ],
  });
  brood.tools.register(
    defineTool({
      name: 'note',
      description: 'noop',
      parameters: { type: 'object', properties: {} },
      execute: () => 'ok',
    }),
  );
  brood.use(subagentTool({ provider: 'spawn', agentOptions: { provider: 'loop', model: 'm' } }));
  let failed = 0;
  brood.subagents.on('end', (event) => {
    if (event.stopReason !== 'completed') failed += 1;
  });
  const root = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
  const started = performance.now();
  await root.run('fan out');
  const makespanMs = performance.now() - started;
  await brood.close();
  await server.close();
  const idealMs = ((2 * n) / SERVER.perSecond) * 1000;
  return {
    makespanMs: round(makespanMs, 0),
    idealMs,
    ratio: round(makespanMs / idealMs, 3),
    throttled: server.counts.throttled,
    failedChildren: failed,
    maxInFlight: server.counts.maxInFlight,
  };
}

async function runRateLimited(n, log) {
  const matching = { providers: { loop: { concurrent: SERVER.concurrent, requestsPerMinute: SERVER.perSecond * 60 } } };
  const tooHigh = {
    providers: { loop: { concurrent: SERVER.concurrent * 1.25, requestsPerMinute: SERVER.perSecond * 60 * 1.25 } },
  };
  const out = { n, requestsPerChild: 2, latencyMs: LATENCY_MS, server: SERVER };
  for (const [name, limits] of [
    ['matching', matching],
    ['tooHigh', tooHigh],
    ['unset', undefined],
  ]) {
    out[name] = await rateLimitedCase(n, limits);
    log(`governed rateLimited ${name}: ${JSON.stringify(out[name])}`);
  }
  return out;
}

/** Scripts for a tree of `depth` levels below the root, `branching` children each. */
function treeScripts(depth, branching) {
  const scripts = [];
  const add = (name, level) => {
    const leaf = level === depth;
    const calls = Array.from({ length: branching }, (_, i) => ({
      name: 'subagent',
      arguments: { description: `${name}.${i}`, prompt: `${name}.${i}` },
    }));
    scripts.push({
      match: `/^${name.replace(/\./g, '\\.')}$/`,
      latencyMs: LATENCY_MS,
      turns: leaf ? [{ text: 'leaf' }] : [{ toolCalls: calls }, { text: 'node' }],
    });
    if (!leaf) for (let i = 0; i < branching; i++) add(`${name}.${i}`, level + 1);
  };
  add('t', 0);
  return scripts;
}

async function runDeepCapped(depth, branching, agents, log) {
  const brood = createBrood({
    maxParallelToolCalls: branching,
    limits: { agents },
    models: [scriptedModels({ id: 'scripted', scripts: treeScripts(depth, branching) })],
  });
  brood.use(subagentTool({ provider: 'spawn', maxDepth: depth }));
  let count = 1;
  brood.subagents.on('start', () => (count += 1));
  const root = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
  const started = performance.now();
  const result = await root.run('t');
  const makespanMs = performance.now() - started;
  await brood.close();
  const boundMs = (count * LATENCY_MS) / agents;
  const out = {
    depth,
    branching,
    agentsLimit: agents,
    agents: count,
    completed: result.stopReason === 'completed',
    makespanMs: round(makespanMs, 0),
    boundMs,
    ratio: round(makespanMs / boundMs, 3),
  };
  log(`governed deepCapped: ${JSON.stringify(out)}`);
  return out;
}

async function fanoutOnce(n, p, limits) {
  const brood = createBrood({
    maxParallelToolCalls: p,
    ...(limits ? { limits } : {}),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [fanOut(n), { match: 'child', latencyMs: LATENCY_MS, turns: [{ text: 'done' }] }],
      }),
    ],
  });
  brood.use(subagentTool({ provider: 'spawn' }));
  const root = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
  await root.run('fan out'); // warm the pool
  const again = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
  const started = performance.now();
  await again.run('fan out');
  const ms = performance.now() - started;
  await brood.close();
  return ms;
}

async function runUnlimitedOverhead(n, p, reps, log) {
  const unreachable = {
    agents: 1_000_000,
    modelRequests: 1_000_000,
    providers: { scripted: { concurrent: 1_000_000 } },
  };
  const plain = [];
  const limited = [];
  for (let i = 0; i < reps; i++) {
    plain.push(await fanoutOnce(n, p, undefined));
    limited.push(await fanoutOnce(n, p, unreachable));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const out = {
    n,
    p,
    reps,
    unlimitedMs: round(median(plain), 1),
    unreachableLimitMs: round(median(limited), 1),
    ratio: round(median(limited) / median(plain), 3),
  };
  log(`governed unlimitedOverhead: ${JSON.stringify(out)}`);
  return out;
}

export async function runGoverned({ quick = false, log = console.log } = {}) {
  return {
    rateLimited: await runRateLimited(quick ? 64 : 256, log),
    deepCapped: await runDeepCapped(3, quick ? 4 : 8, 16, log),
    unlimitedOverhead: await runUnlimitedOverhead(256, 64, quick ? 3 : 5, log),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runGoverned({ quick: process.argv.includes('--quick') });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
