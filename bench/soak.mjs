// Soak: one long-lived runtime runs rounds of a 256-child fan-out (each child two tool steps and an
// answer, scripted model, no latency), every root disposed after its run, as a service runs trees all
// day. After a warm-up, the parent's heap (after a forced GC), RSS and each pool thread's heap are read
// at the start and the end of the measured rounds; growth is reported per 1,000 children.
//   node --expose-gc bench/soak.mjs [--quick]   (every row alone), or as a row of `npm run bench`;
//   node --expose-gc bench/soak.mjs --only worker/memory [--children N] [--warm N] [--retain all|none|recent]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as broodPkg from '../dist/index.js';
import { installDelegation, noopTool, timedRun } from './lib/brood.mjs';
import { childTurns, parentTurns, THREADS } from './lib/schedule.mjs';
import { gc, round } from './lib/stats.mjs';

const { createBrood, fileSessions, memorySessions, moduleAdapter, scriptedModels } = broodPkg;
const N = 256;
const MB = 1024 * 1024;
const probeUrl = new URL('./lib/heap-probe-adapter.mjs', import.meta.url);

function scripts() {
  return [
    {
      match: 'soak-root',
      turns: parentTurns(N, 'subagent', (i) => ({ description: `child ${i}`, prompt: `soak-child #${i}` })),
    },
    { match: 'soak-child ', turns: childTurns },
  ];
}

/**
 * The "features" rows also turn on what keeps per-agent state in the parent: telemetry (spans ended into
 * a processor that drops them), a host subscriber on brood.events(), and an approval the host grants on
 * every child's tool call.
 */
async function featureOptions() {
  const { BasicTracerProvider, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const dropAll = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => undefined };
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropAll)] });
  return { telemetry: { tracerProvider }, approvals: { children: 'ask' } };
}

function grantEveryApproval(brood) {
  const controller = new AbortController();
  const seen = { granted: 0 };
  void (async () => {
    for await (const event of brood.events({ signal: controller.signal }))
      if (event.type === 'approval-request') {
        seen.granted += 1;
        void brood.approvals.respond(event.approvalId, { approve: true });
      }
  })().catch(() => undefined);
  return { seen, stop: () => controller.abort() };
}

function runtimeFor({ runner, store, dir, retain, features }) {
  const brood = createBrood({
    ...(features ?? {}),
    runner,
    maxParallelToolCalls: N,
    pool: { threads: THREADS },
    ...(store === 'file' ? { sessions: fileSessions(dir) } : retain ? { sessions: memorySessions({ retain }) } : {}),
    models: [
      scriptedModels({ id: 'scripted', scripts: scripts() }),
      moduleAdapter({ id: 'probe', models: ['probe'], moduleUrl: probeUrl.href, options: { holdMs: 50 } }),
    ],
  });
  brood.tools.register(noopTool(features ? { approval: 'ask' } : {}));
  installDelegation(brood);
  return brood;
}

/** Each pool thread's heap after a full GC, read by probes started together (one lands on each thread). */
async function threadHeaps(brood, runner) {
  if (runner !== 'worker') return [];
  const heaps = new Map();
  for (let attempt = 0; attempt < 3 && heaps.size < THREADS; attempt++) {
    const answers = await Promise.all(
      Array.from({ length: THREADS * 2 }, async () => {
        const agent = await brood.createAgent({ model: { provider: 'probe', model: 'probe' } });
        try {
          return JSON.parse((await agent.run('heap')).output);
        } finally {
          await agent.dispose();
        }
      }),
    );
    for (const { threadId, heapUsed } of answers)
      heaps.set(threadId, Math.min(heapUsed, heaps.get(threadId) ?? Infinity));
  }
  return [...heaps.values()];
}

async function sample(brood, runner) {
  gc();
  return {
    heap: process.memoryUsage().heapUsed,
    rss: process.memoryUsage.rss(),
    threads: await threadHeaps(brood, runner),
  };
}

async function soakOne({ runner, store, children, warmChildren, log, retain, withFeatures = false }) {
  const dir = store === 'file' ? mkdtempSync(join(tmpdir(), 'brood-soak-bench-')) : undefined;
  const features = withFeatures ? await featureOptions() : undefined;
  const brood = runtimeFor({ runner, store, dir, retain, features });
  const granting = withFeatures ? grantEveryApproval(brood) : undefined;
  const round1 = () => timedRun(brood, 'soak-root', `soak ${runner}/${store}`, 600_000);
  try {
    for (let done = 0; done < warmChildren; done += N) await round1();
    const start = await sample(brood, runner);
    const rounds = Math.ceil(children / N);
    const t0 = performance.now();
    for (let i = 0; i < rounds; i++) await round1();
    const ms = performance.now() - t0;
    const end = await sample(brood, runner);
    const per1k = (bytes) => round(bytes / MB / ((rounds * N) / 1000), 3);
    const threadGrowth = end.threads.map((h, i) => (h - (start.threads[i] ?? h)) / MB);
    const out = {
      runner,
      store,
      features: withFeatures,
      ...(granting ? { approvalsGranted: granting.seen.granted } : {}),
      children: rounds * N,
      warmChildren,
      ms: Math.round(ms),
      heapStartMb: round(start.heap / MB, 1),
      heapEndMb: round(end.heap / MB, 1),
      heapGrowthMbPer1k: per1k(end.heap - start.heap),
      rssStartMb: round(start.rss / MB, 1),
      rssEndMb: round(end.rss / MB, 1),
      rssGrowthPct: round(((end.rss - start.rss) / start.rss) * 100, 1),
      threadHeapStartMb: start.threads.map((h) => round(h / MB, 1)),
      threadHeapEndMb: end.threads.map((h) => round(h / MB, 1)),
      threadHeapGrowthMbMax: round(Math.max(0, ...threadGrowth), 1),
    };
    log(
      `soak ${runner}/${store}${withFeatures ? '+features' : ''}: ${out.children} children in ${out.ms} ms; heap ${out.heapStartMb} → ${out.heapEndMb} MB (${out.heapGrowthMbPer1k} MB per 1,000), RSS ${out.rssStartMb} → ${out.rssEndMb} MB (${out.rssGrowthPct} %), thread heaps ${out.threadHeapStartMb.join('/')} → ${out.threadHeapEndMb.join('/')} MB`,
    );
    return out;
  } finally {
    granting?.stop();
    await brood.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A full run measures 100,000 children per configuration with the default store (after 30,720 warm-up
 * children: enough to fill its 64 MiB retention budget, the state a long-lived service is in after its
 * first hour) and 25,600 with fileSessions (whose rows are dominated by fsync and already flat).
 */
export async function runSoak({ quick, log }) {
  const plan = {
    memory: quick ? { children: 10_240, warmChildren: 30_720 } : { children: 102_400, warmChildren: 30_720 },
    file: quick ? { children: 5_120, warmChildren: 2_560 } : { children: 25_600, warmChildren: 5_120 },
  };
  const rows = [];
  for (const runner of ['worker', 'inline'])
    for (const store of ['memory', 'file']) rows.push(await soakOne({ runner, store, ...plan[store], log }));
  rows.push(await soakOne({ runner: 'worker', store: 'memory', ...plan.memory, log, withFeatures: true }));
  return { n: N, rows };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--children');
  const only = args.indexOf('--only');
  const log = (line) => console.log(line);
  if (only >= 0) {
    const [runner, store] = args[only + 1].split('/');
    const children = at >= 0 ? Number(args[at + 1]) : 25_600;
    const retainAt = args.indexOf('--retain');
    const retain = retainAt >= 0 ? args[retainAt + 1] : undefined;
    const withFeatures = args.includes('--features');
    const warmAt = args.indexOf('--warm');
    const warmChildren = warmAt >= 0 ? Number(args[warmAt + 1]) : 2_560;
    console.log(JSON.stringify(await soakOne({ runner, store, children, warmChildren, log, retain, withFeatures })));
  } else {
    const out = await runSoak({ quick: args.includes('--quick'), log });
    console.log(JSON.stringify(out));
  }
}
