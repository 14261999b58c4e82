// Abort → turn end. A top-level turn is aborted (its run signal) while its driver waits
// on a scripted model request, on an HTTP request a loopback server never answers, in the HTTP adapter's
// wait before a retry (the server answered 503), or on a tool that honours its signal; the figure is the
// time from `abort()` to `run()` resolving (its `turn/end` is durable by then). The target is 100 ms on
// a quiet machine. Every sample must end `aborted` with no force-stop diagnostic; the counts of those
// that did not are reported beside the figures.
//   node --expose-gc bench/abort-latency.mjs [--quick]
import { createServer } from 'node:http';
import { createBrood, defineTool, openAICompatible, scriptedModels } from '../dist/index.js';
import { stampedSessions } from './lib/brood.mjs';
import { attempt, withDeadline } from './lib/run-guard.mjs';
import { round, summarize } from './lib/stats.mjs';

/** Long enough that nothing but the abort ends the wait. */
const HOLD_MS = 60_000;
/** Lets the driver get from "the request started" into the wait itself (not counted). */
const SETTLE_MS = 5;
const WARMUP = 5;

const WAITS = ['model request', 'HTTP request', 'retry wait', 'tool'];

/** A loopback server answering each request with `answer` and telling `onRequest` it came. */
async function loopback(answer) {
  let onRequest = () => undefined;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answer(res);
      onRequest();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}/v1`,
    next: () => new Promise((resolve) => (onRequest = resolve)),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function runtime(runner, silent, busy, sessions) {
  const retry = { retries: 5, baseDelayMs: HOLD_MS, maxDelayMs: HOLD_MS };
  const http = (id, base) =>
    openAICompatible({ id, baseURL: base, apiKey: 'bench', models: ['m'], stream: false, retry });
  const brood = createBrood({
    runner,
    pool: { threads: 1 },
    sessions,
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'model request', latencyMs: HOLD_MS, turns: [{ text: 'never' }] },
          { match: 'tool', turns: [{ toolCalls: [{ name: 'until_aborted', arguments: {} }] }, { text: 'never' }] },
        ],
      }),
      http('silent', silent.base),
      http('busy', busy.base),
    ],
  });
  const toolStarted = { resolve: () => undefined };
  brood.tools.register(
    defineTool({
      name: 'until_aborted',
      description: 'returns when its call is aborted',
      parameters: { type: 'object', properties: {} },
      execute: (_args, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
          toolStarted.resolve();
        }),
    }),
  );
  return { brood, toolStarted };
}

/** Starts one turn that waits on `wait`; resolves once its driver is inside that wait. */
async function startWaiting(setup, wait) {
  const { brood, toolStarted, silent, busy, requestSeen } = setup;
  const provider = { 'model request': 'scripted', tool: 'scripted', 'HTTP request': 'silent', 'retry wait': 'busy' }[
    wait
  ];
  const agent = await brood.createAgent({ model: { provider, model: provider === 'scripted' ? 'scripted' : 'm' } });
  const inside = {
    'model request': () => requestSeen(agent.id),
    tool: () => new Promise((resolve) => (toolStarted.resolve = resolve)),
    'HTTP request': () => silent.next(),
    'retry wait': () => busy.next(),
  }[wait]();
  const controller = new AbortController();
  const result = agent.run(wait, { signal: controller.signal });
  await withDeadline(inside, 10_000, `a turn waiting on ${wait}`);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return { agent, controller, result };
}

async function measureRunner(runner, samples) {
  const silent = await loopback(() => undefined);
  const busy = await loopback((res) => res.writeHead(503).end('busy'));
  // The driver logs model/request just before the adapter starts; the parent's store sees it arrive.
  const seen = new Map();
  const sessions = stampedSessions((id, events) => {
    if (events.some((event) => event.type === 'model/request')) seen.get(id)?.();
  });
  const requestSeen = (agentId) => new Promise((resolve) => seen.set(agentId, resolve));
  const { brood, toolStarted } = runtime(runner, silent, busy, sessions);
  const setup = { brood, toolStarted, silent, busy, requestSeen };
  const out = {};
  try {
    for (const wait of WAITS) {
      const ms = [];
      let notAborted = 0;
      let forceStopped = 0;
      for (let i = 0; i < WARMUP + samples; i++) {
        const { agent, controller, result } = await startWaiting(setup, wait);
        const t0 = performance.now();
        controller.abort();
        const ended = await withDeadline(result, 10_000, `the aborted turn waiting on ${wait}`);
        const elapsed = performance.now() - t0;
        await agent.dispose();
        if (i < WARMUP) continue;
        ms.push(elapsed);
        if (ended.stopReason !== 'aborted') notAborted++;
        if (ended.diagnostic !== undefined) forceStopped++;
      }
      const s = summarize(ms);
      out[wait] = {
        samples,
        p50Ms: round(s.p50, 2),
        p99Ms: round(s.p99, 2),
        maxMs: round(s.max, 2),
        notAborted,
        forceStopped,
      };
    }
  } finally {
    await brood.close();
    await Promise.all([silent.close(), busy.close()]);
  }
  return out;
}

/**
 * A turn aborted while the runtime's first pool thread is still booting (threads start lazily, on the
 * first run): a fresh runtime per sample, the abort 10 ms after `run()`. Worker runner only.
 */
async function measureFirstBoot(samples) {
  const ms = [];
  let notAborted = 0;
  let diagnostics = 0;
  for (let i = 0; i < samples; i++) {
    const brood = createBrood({
      pool: { threads: 1 },
      models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'boot', turns: [{ text: 'done' }] }] })],
    });
    try {
      const agent = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
      const controller = new AbortController();
      const result = agent.run('boot', { signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 10));
      const t0 = performance.now();
      controller.abort();
      const ended = await withDeadline(result, 10_000, 'a turn aborted during the first boot');
      ms.push(performance.now() - t0);
      if (ended.stopReason !== 'aborted') notAborted++;
      if (ended.diagnostic !== undefined) diagnostics++;
    } finally {
      await brood.close();
    }
  }
  const s = summarize(ms);
  return { samples, p50Ms: round(s.p50, 2), p99Ms: round(s.p99, 2), maxMs: round(s.max, 2), notAborted, diagnostics };
}

export async function runAbortLatency({ quick, log }) {
  const samples = quick ? 30 : 200;
  const out = { waits: WAITS };
  out.firstBoot = await measureFirstBoot(quick ? 10 : 30);
  log(
    `abort → turn end worker, first thread booting: p50 ${out.firstBoot.p50Ms} ms p99 ${out.firstBoot.p99Ms} ms (not aborted ${out.firstBoot.notAborted})`,
  );
  for (const runner of ['worker', 'inline']) {
    out[runner] = await measureRunner(runner, samples);
    for (const wait of WAITS) {
      const r = out[runner][wait];
      log(
        `abort → turn end ${runner}, ${wait}: p50 ${r.p50Ms} ms p99 ${r.p99Ms} ms max ${r.maxMs} ms (not aborted ${r.notAborted}, force-stopped ${r.forceStopped})`,
      );
    }
  }
  return out;
}

// Alone: `node --expose-gc bench/abort-latency.mjs [--quick]` (needs `npm run build`).
if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  const log = (line) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${line}`);
  const result = await attempt(() => runAbortLatency({ quick: process.argv.includes('--quick'), log }));
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
