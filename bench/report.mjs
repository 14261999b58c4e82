// Writes bench/results/latest.json (everything measured), latest.md (tables a reader can use
// without the JSON) and makespan.svg (makespan vs N for the three systems).
import { mkdir, writeFile } from 'node:fs/promises';
import { makespanSvg } from './lib/svg.mjs';
import { crashResumeSection } from './report-crash-resume.mjs';
import { wideFanoutSection } from './report-wide.mjs';

const fmt = (v, digits = 1) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));
const ms = (cell) => (cell?.error ? 'error' : fmt(cell?.makespanMs, 0));
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? fmt(a / b, 2) : '—');
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );

/** A `cpuMsPerChild` figure as "main / started / background" ms. */
const cpuGroups = (c) => (c ? `${fmt(c.main, 2)} / ${fmt(c.started, 2)} / ${fmt(c.background, 2)}` : '—');

function fanoutSection(f, peer, steady, budget) {
  const makespan = table(
    [
      'N',
      'P',
      'C ms',
      'ideal',
      'floor',
      'worker',
      'inline',
      'peer',
      'worker/floor',
      'worker/ideal',
      'inline/floor',
      'peer/floor',
      'inline÷worker',
      'peer÷worker',
    ],
    f.rows.map((r) => [
      r.n,
      r.p,
      r.cpuMs,
      fmt(r.idealMs, 0),
      ms(r.floor),
      ms(r.worker),
      ms(r.inline),
      ms(r.peer),
      ratio(r.worker.makespanMs, r.floor.makespanMs),
      ratio(r.worker.makespanMs, r.idealMs),
      ratio(r.inline.makespanMs, r.floor.makespanMs),
      ratio(r.peer.makespanMs, r.floor.makespanMs),
      ratio(r.inline.makespanMs, r.worker.makespanMs),
      ratio(r.peer.makespanMs, r.worker.makespanMs),
    ]),
  );
  const loop = table(
    [
      'N',
      'P',
      'C ms',
      'loop p50/p99 worker',
      'loop p50/p99 inline',
      'loop p50/p99 peer',
      'loop p50/p99 floor',
      'RSS growth worker',
      'inline',
      'peer',
    ],
    f.rows.map((r) => [
      r.n,
      r.p,
      r.cpuMs,
      ...['worker', 'inline', 'peer', 'floor'].map((k) =>
        r[k]?.error ? 'error' : `${fmt(r[k]?.loopDelayP50Ms)} / ${fmt(r[k]?.loopDelayP99Ms)}`,
      ),
      ...['worker', 'inline', 'peer'].map((k) => (r[k]?.error ? 'error' : `${fmt(r[k]?.rssGrowthMb)} MB`)),
    ]),
  );
  const cpu = table(
    ['N', 'P', 'C ms', 'worker', 'inline', 'floor'],
    f.rows.map((r) => [r.n, r.p, r.cpuMs, ...['worker', 'inline', 'floor'].map((k) => cpuGroups(r[k]?.cpuMsPerChild))]),
  );
  const firstRuns = table(
    ['N', 'P', 'C ms', 'first run floor', 'worker', 'inline', 'peer'],
    f.rows.map((r) => [
      r.n,
      r.p,
      r.cpuMs,
      ...['floor', 'worker', 'inline', 'peer'].map((k) => (r[k]?.error ? 'error' : fmt(r[k]?.firstRunMs, 0))),
    ]),
  );
  const errors = f.rows.flatMap((r) =>
    ['floor', 'worker', 'inline', 'peer']
      .filter((k) => r[k]?.error && !(k === 'peer' && !peer.available))
      .map((k) => `- N=${r.n} P=${r.p} C=${r.cpuMs} ${k}: ${r[k].error}`),
  );
  return `## Fan-out (makespan, ms; ${f.rows.some((r) => r.n >= 256) ? 'median of 3 timed runs, 2 at N=256' : 'one timed run per cell (--quick)'}, after one untimed first run of the configuration on the same runtime; no forced GC before a timed run)

Parent: one assistant message with N \`subagent\` calls (delegation via \`${f.delegation}\`), P = \`maxParallelToolCalls\`.
Child: K = ${f.K} requests in one turn (two steps calling a trivial concurrency-safe tool, then the answer), L = ${f.L} ms each,
plus C ms of CPU per child request in the CPU case. Pool threads = ${f.threads}.
**ideal** = 2L + max(⌈N/P⌉·K·(L+C), N·K·C / cores). **floor** = the same schedule with bare timers and CPU burns on
${f.threads} plain worker threads, no brood code, measured in the same run (it absorbs timer slack and machine load).
Ratios > 1 are slower than the reference; "inline÷worker" and "peer÷worker" > 1 mean the worker runner is faster.

${makespan}

Cold first fan-out of each runtime, from \`createBrood\` (N=16, C=0, includes pool thread start and module loading; excluded from the
table; runtimes are created one at a time, inline first, so inline/8 also carries the process's first compilation of brood):
${Object.entries(f.coldFirstRunMs ?? {})
  .map(([k, v]) => `${k} ${fmt(v, 0)} ms`)
  .join(
    ', ',
  )}. Worker runtimes boot their threads from the V8 code cache (README, Design), primed in this run by one more worker/8
runtime measured first with an empty cache, as the first run after installing brood is: ${fmt(f.coldFirstRunNoCacheMs?.['worker/8'], 0)} ms.

${steadySection(steady)}
${budgetSection(budget, steady)}
Parent (main-thread) event-loop delay, ms, from \`monitorEventLoopDelay\` during the median run (resolution 1 ms, so ~1.1 ms is
the idle floor), and peak RSS growth sampled every 25 ms during the configuration's first run, against a baseline taken (after
a forced GC) at its start:

${loop}

CPU per child over each system's timed runs (ms, /proc in 10 ms ticks): main thread / the threads the run's systems started (brood's
pool threads, the floor's burners) / the threads that were there before any of them (V8's compiler and GC helpers). On two cores,
everything here competes for the same CPU. The third figure is V8's helper threads: TurboFan compiling, in each isolate, the code a
fan-out runs, and the GC's concurrent marking of heaps that keep every session in memory (in a fresh process,
\`node --no-concurrent-recompilation bench/profile-fanout.mjs worker 256 64 3\` moved ~85 % of it onto the isolates' own threads).

${cpu}

The untimed first run of each configuration on each system (it follows the previous configuration's runs on the same runtime):

${firstRuns}
${errors.length ? `\nErrors:\n${errors.join('\n')}\n` : ''}`;
}

/** The machine's bare thread-crossing floor (bench/crossing.mjs), the yardstick for the two sections around it. */
function crossingSection(c) {
  if (!c) return '';
  if (c.error) return `### Bare crossing\n\nError: ${c.error}\n`;
  const rows = Object.entries(c.byIdleMs).map(([idle, x]) => [
    idle,
    x.count,
    fmt(x.roundTripP50Us),
    fmt(x.roundTripP99Us),
    fmt(x.postP50Us),
  ]);
  return `### Bare crossing (no brood code)

A MessagePort echo between the main thread and one worker after both sat idle for a while (20 ms = one model request's
latency, what a hop after a model wait meets); the sender's \`postMessage\` time is its own cost of waking the sleeping thread.

${table(['idle before, ms', 'round trips', 'round trip p50 µs', 'p99 µs', 'postMessage p50 µs'], rows)}
`;
}

function otherSections(r) {
  const sl = r.startLatency;
  const rpc = r.toolRpc;
  const dt = r.deepTree;
  const pk = r.parked;
  const dtRows = ['worker', 'inline'].flatMap((k) =>
    (dt.byRunner?.[k]?.rows ?? []).map((x) => [
      k,
      x.depth,
      x.agents,
      fmt(x.idealMs, 0),
      fmt(x.makespanMs, 0),
      fmt(x.overheadPerLevelMs),
    ]),
  );
  return `## Start latency

\`brood.subagents.start()\` → the child's first \`model/request\`, observed by the parent (a SessionStore wrapper stamps each append with
\`performance.now()\`), children started one at a time after a warm-up, so this is latency, not queueing.

${table(
  ['runner', 'children', 'p50 ms', 'p99 ms', 'mean ms', 'max ms'],
  ['worker', 'inline']
    .filter((k) => sl[k])
    .map((k) => [
      k,
      sl[k].children,
      fmt(sl[k].p50Ms, 3),
      fmt(sl[k].p99Ms, 3),
      fmt(sl[k].meanMs, 3),
      fmt(sl[k].maxMs, 1),
    ]),
)}
${sl.error ? `\nError: ${sl.error}\n` : ''}
## Tool RPC

One driver makes M calls to a trivial tool in a single assistant message. The tool is not concurrency-safe, so the calls run
strictly in sequence: call i+1 starts only after call i's result was committed. Round trip = (tool body i+1 starts) − (tool body i
returned), stamped in the parent. The figure is the **proxied** round trip: the message also holds a run_code call (first), so the
driver schedules the calls itself (run_code's sandbox is in its thread) and each gap is result → driver → execute request → parent,
session writes included, no model request in between. calls/s = M over the whole sequence. The message runs ${rpc.worker?.rounds ?? 1}
times on one runtime and the last round is the figure (a warm runtime, as in the fan-out table); the first round, which carries
thread start and the JIT tiering up the call path, is shown beside it. Last column: the same calls without run_code, as a message
usually is: the parent schedules a message's calls itself (\`DriverGateway.runTools\`), so those gaps cross no thread.

${table(
  [
    'runner',
    'calls',
    'p50 µs',
    'p99 µs',
    'mean µs',
    'calls/s',
    'first round p50 / p99 µs',
    'parent-scheduled p50 / p99 µs',
  ],
  ['worker', 'inline']
    .filter((k) => rpc[k])
    .map((k) => [
      k,
      rpc[k].calls,
      fmt(rpc[k].p50Us),
      fmt(rpc[k].p99Us),
      fmt(rpc[k].meanUs),
      fmt(rpc[k].callsPerSec, 0),
      rpc[k].firstRun ? `${fmt(rpc[k].firstRun.p50Us)} / ${fmt(rpc[k].firstRun.p99Us)}` : '—',
      rpc[k].parentScheduled ? `${fmt(rpc[k].parentScheduled.p50Us)} / ${fmt(rpc[k].parentScheduled.p99Us)}` : '—',
    ]),
)}
${rpc.error ? `\nError: ${rpc.error}\n` : ''}
${crossingSection(r.crossing)}
## Deep tree

Branching ${dt.branching ?? 2}, pool threads ${dt.threads ?? 2}, every request L = ${dt.L ?? 20} ms; an internal node makes 2 requests, a leaf 1,
so ideal(D) = (2D + 1)·L. Overhead per level = (makespan − ideal) / D. Marginal overhead per level (slope over D = 1..6):
worker ${fmt(dt.byRunner?.worker?.marginalOverheadPerLevelMs)} ms, inline ${fmt(dt.byRunner?.inline?.marginalOverheadPerLevelMs)} ms.
${dt.error ? `\nError: ${dt.error}\n` : ''}
${table(['runner', 'depth', 'agents', 'ideal ms', 'makespan ms', 'overhead/level ms'], dtRows)}

## Code Mode (run_code sandbox)

${codeModeSection(r.codeMode)}
## Event stream

${eventsSection(r.eventsCost)}
## Telemetry

${telemetrySection(r.telemetry)}
## Abort latency

${abortSection(r.abortLatency)}
## Approvals

${approvalsSection(r.approvals)}
## Governed fan-out

${governedSection(r.governed)}
## AI SDK models (aiSdkModels)

${aiSdkSection(r.aiSdk)}
## Parked continuables

${
  pk.error
    ? `Error: ${pk.error}`
    : `${pk.children} continuable children started from inside a parent tool call (so settlement notices queue instead of waking the
parent), each finished its first turn and went idle. The baseline is taken after GC on a warm runtime that already holds
${pk.parkedBeforeBaseline ?? 0} parked children, so the figure is what one more parked child costs; parking those first ones grew RSS by
${fmt(pk.warmupRssGrowthMb)} MB (${fmt(pk.firstRssPerChildKb)} KB each), mostly each pool thread's V8 heap growing to full size once (its live heap stays ~8 MB). After GC: **${fmt(pk.rssPerChildKb)} KB RSS per child**
(${fmt(pk.rssGrowthMb)} MB total), ${fmt(pk.heapPerChildKb)} KB of main-thread JS heap per child. RSS is read after every isolate has
collected (the pool threads too: their old generations otherwise hold the parking activations' garbage; with the main thread's GC alone, ${fmt(pk.rssPerChildMainGcOnlyKb)} KB per child); it still holds heap pages V8 keeps after collection, so the main-heap figure is the closer measure of what a parked child retains. Starting and parking all of them took ${fmt(pk.startAllMs, 0)} ms.${followupSentence(pk.followup)}`
}
`;
}

/** Followups to parked children: `followup()` → that child's next `model/request` at the parent's store. */
function followupSentence(f) {
  if (!f) return '';
  return ` A followup to one of them, ${f.samples} sent one at a time across the population: its turn starts (next \`model/request\`)
p50 ${fmt(f.p50Ms, 3)} ms, p90 ${fmt(f.p90Ms, 3)} ms, **p99 ${fmt(f.p99Ms, 3)} ms**, max ${fmt(f.maxMs, 1)} ms after \`followup()\`${
    f.slowestOverlappingGc ? ` (${f.slowestOverlappingGc} of the slowest 1 % overlapped a main-thread GC pause)` : ''
  }.`;
}

function approvalsSection(ap) {
  if (!ap) return 'Not run.\n';
  if (ap.error) return `Error: ${ap.error}\n`;
  return `A root turn delegates to ${ap.children} sibling children at once (worker runner, two threads); ${ap.guarded} of them call a tool that
needs approval, granted by the host ${ap.grantAfterMs} ms after each request. The same tree without approvals runs in ${ap.rounds}
interleaved rounds (medians). The other children's last finish: **${fmt(ap.gatedLastFreeMs, 1)} ms** vs ${fmt(ap.plainLastFreeMs, 1)} ms
(${fmt(ap.freeRatio, 3)}×, target ≤ 1.05×); the whole run ${fmt(ap.gatedMakespanMs, 1)} ms vs ${fmt(ap.plainMakespanMs, 1)} ms
(${fmt(ap.makespanOverBudget, 3)}× of ${ap.grantAfterMs} ms + 1.05× the run without approvals, target ≤ 1).
`;
}

function abortSection(ab) {
  if (!ab) return 'Not run.\n';
  if (ab.error) return `Error: ${ab.error}\n`;
  const rows = ['worker', 'inline'].flatMap((runner) =>
    ab.waits.map((wait) => {
      const x = ab[runner][wait];
      return [runner, wait, x.samples, fmt(x.p50Ms, 2), fmt(x.p99Ms, 2), fmt(x.maxMs, 2), x.notAborted, x.forceStopped];
    }),
  );
  const boot = ab.firstBoot;
  if (boot)
    rows.push([
      'worker',
      'first thread booting',
      boot.samples,
      fmt(boot.p50Ms, 2),
      fmt(boot.p99Ms, 2),
      fmt(boot.maxMs, 2),
      boot.notAborted,
      '—',
    ]);
  return `A top-level turn aborted through its run signal while its driver waits on a scripted model request, an HTTP request a
loopback server never answers, the HTTP adapter's wait before a retry (the server answered 503), or a tool that honours its
signal: \`abort()\` → \`run()\` resolved (its \`turn/end\` durable), one warm thread; and a turn aborted 10 ms after the
first \`run()\` of a fresh runtime, while its first pool thread boots. Target: 100 ms. The last two columns count
samples that did not end \`aborted\` and samples stopped by force (both must be 0).

${table(['runner', 'waiting on', 'samples', 'p50 ms', 'p99 ms', 'max ms', 'not aborted', 'force-stopped'], rows)}
`;
}

function telemetrySection(te) {
  if (!te) return 'Not run.\n';
  if (te.error) return `Error: ${te.error}\n`;
  return `Latency-only fan-out N=${te.n} P=${te.p}, ${te.floorMs === undefined ? 'two' : 'three'} warm worker runtimes, ${te.rounds} interleaved rounds: without telemetry
**${fmt(te.offMs, 1)} ms**, with \`telemetry\` (the SDK's in-memory exporter behind a BatchSpanProcessor, ${te.spansPerRun} spans per run)
**${fmt(te.onMs, 1)} ms** (${fmt(te.onOverOff, 3)}×; target ≤ 1.05×).${te.mainCpuMsPerRun ? ` The parent's main thread, where spans are built, used ${fmt(te.mainCpuMsPerRun.off, 1)} ms of CPU per run without and ${fmt(te.mainCpuMsPerRun.on, 1)} ms with.` : ''}${te.floorMs === undefined ? '' : floorSentence(te)} Without \`telemetry\` nothing of OpenTelemetry is loaded, so the
fan-out table above is the no-telemetry figure.
`;
}

function floorSentence(te) {
  const cpu = te.mainCpuMsPerRun;
  const us = te.mainCpuUsPerSpan;
  if (us.broodAboveFloor === undefined)
    return ` The SDK's floor, measured in place: **${fmt(te.floorMs, 1)} ms** (${fmt(te.floorOverOff, 3)}×), ${fmt(cpu.floor, 1)} ms of main-thread CPU per run; ${fmt(us.floor, 1)} µs per span for bare SDK calls, ${fmt(us.on, 1)} µs with brood's telemetry (load ${te.load.join(' ')}).`;
  return ` Ratios are medians of the per-round ratios. The floor, measured in place (no \`telemetry\`; the same spans, names, kinds, attributes and parents made the cheapest way the SDK allows, with the same provider, processor and exporter, as the parent's session store receives the events): **${fmt(te.floorMs, 1)} ms** (${fmt(te.floorOverOff, 3)}×), ${fmt(cpu.floor, 1)} ms of main-thread CPU per run. Main-thread CPU per span (medians of per-round differences): the floor ${fmt(us.floor, 1)} µs above off${quartiles(te, 'floor')}${te.floorInPlaceUsPerSpan === undefined ? '' : `, ${fmt(te.floorInPlaceUsPerSpan, 1)} µs timed in place around its own span work`}, brood ${fmt(us.broodAboveFloor, 1)} µs above the floor${quartiles(te, 'broodAboveFloor')} (${fmt(us.on, 1)} µs above off in all). The wall budget of 1.05× is ${fmt(te.budgetMs, 1)} ms; the floor's spans alone cost the parent's main thread, the run's critical path, ${fmt(us.floor, 1)} µs × ${te.spansPerRun} = ${fmt(te.floorSpansMs, 1)} ms per run, which ${te.floorFitsBudget ? 'fits within' : 'exceeds'} it (load ${te.load.join(' ')}).`;
}

/** The middle half of the per-round figures, when the row recorded them. */
function quartiles(te, key) {
  const q = te.mainCpuUsPerSpanQuartiles?.[key];
  return q ? ` (middle half of rounds ${fmt(q[0], 1)} to ${fmt(q[1], 1)})` : '';
}

/** 'real-time' when the server thread could take real-time scheduling (bench/lib/limited-server.mjs). */
function serverPriority(row) {
  if (row.serverPriority === 'realtime') return 'real-time';
  return 'normal (real-time scheduling was not permitted: on a shared machine it then reads some requests late)';
}

function aiSdkSection(a) {
  if (!a) return 'Not run.\n';
  if (a.error) return `Error: ${a.error}\n`;
  return `One agent on a pool thread, a turn of ${a.steps} model requests (a tool call each) against an AI SDK model that answers at
once (\`ai/test\`'s MockLanguageModelV4). Module shape (the model built in the thread): ${fmt(a.moduleUs, 1)} µs per request; proxied
shape (the model kept in the parent, each request crossing to it): ${fmt(a.proxiedUs, 1)} µs. The proxy's cost, **${fmt(a.proxyCostUs, 1)} µs
per request**, compares with the tool-RPC round trip above (one crossing to open the call, one per batch of stream parts).
`;
}

function governedSection(g) {
  if (!g) return 'Not run.\n';
  if (g.error) return `Error: ${g.error}\n`;
  const rl = g.rateLimited;
  const rows = ['matching', 'tooHigh', 'unset'].map((name) => {
    const x = rl[name];
    const gaps = x.arrivalGapMs;
    const gapCell = gaps ? `${fmt(gaps.p1, 1)} / ${fmt(gaps.p50, 1)} / ${fmt(gaps.p99, 1)}` : '–';
    const paced = x.pacedRatio === undefined ? '–' : `${fmt(x.firstArrivalMs, 0)} / ${fmt(x.pacedRatio, 3)}`;
    return [name, fmt(x.makespanMs, 0), fmt(x.ratio, 3), x.throttled, x.failedChildren, gapCell, paced];
  });
  const dc = g.deepCapped;
  const uo = g.unlimitedOverhead;
  return `**rateLimited**: N=${rl.n} children × ${rl.requestsPerChild} requests (${rl.latencyMs} ms each) through \`openAICompatible\` against a
loopback server limited to ${rl.server.concurrent} concurrent and ${rl.server.perSecond} requests/s (no burst; 429 + retry-after-ms beyond
them); ideal ${fmt(rl.matching.idealMs, 0)} ms. Targets: matching ≤ 1.10×, 0 429s, 0 failed; 25 % too high ≤ 1.30×, 0 failed.
The server runs on its own thread (as a provider runs on its own machine), at ${serverPriority(rl.matching)} priority, and enforces the rate as GCRA: a request is refused
if it arrives more than half a spacing (5 ms) before one spacing after the last accepted one's slot — never two inside one
spacing. Arrival gaps are between consecutive accepted requests as the server read them; start-up is run() to the first
accepted request (256 child starts on a warm runtime: a warm-up fan-out first started the pool's threads and made HTTP requests
from them to a server of its own), and the paced ratio counts from there.

${table(['limits.providers', 'makespan ms', '÷ ideal', '429s', 'failed children', 'arrival gap p1 / p50 / p99 ms', 'start-up ms / paced ratio'], rows)}

**deepCapped**: depth ${dc.depth}, branching ${dc.branching} (${dc.agents} agents) under \`limits.agents: ${dc.agentsLimit}\`:
${dc.completed ? 'completed' : '**did not complete**'} in ${fmt(dc.makespanMs, 0)} ms, ${fmt(dc.ratio, 2)}× (agents × latency ÷ limit = ${fmt(dc.boundMs, 0)} ms).

${unlimitedOverheadSentence(uo)}
`;
}

function unlimitedOverheadSentence(uo) {
  if (uo.pairs === undefined)
    return `**Unlimited overhead**: scripted fan-out N=${uo.n} P=${uo.p}, ${uo.reps} interleaved rounds: no limits ${fmt(uo.unlimitedMs, 1)} ms,
an unreachable limit set ${fmt(uo.unreachableLimitMs, 1)} ms (**${fmt(uo.ratio, 3)}×**; target ≤ 1.03×).`;
  const cpu = uo.cpuPerRunMs;
  return `**Unlimited overhead**: scripted fan-out N=${uo.n} P=${uo.p}, ${uo.pairs} pairs interleaved on two warm runtimes in one process:
no limits ${fmt(uo.unlimitedMs, 1)} ms, an unreachable limit set ${fmt(uo.unreachableLimitMs, 1)} ms (medians); median of the per-pair ratios
**${fmt(uo.ratio, 3)}×** (target ≤ 1.03×). Main-thread CPU per run ${fmt(cpu.unlimited.main, 1)} ms without, ${fmt(cpu.unreachableLimit.main, 1)} ms with
(**${fmt(uo.mainCpuRatio, 3)}×**); whole process ${fmt(cpu.unlimited.process, 1)} / ${fmt(cpu.unreachableLimit.process, 1)} ms (load ${uo.load.join(' ')}).`;
}

function eventsSection(ev) {
  if (!ev) return 'Not run.\n';
  if (ev.error) return `Error: ${ev.error}\n`;
  return `Latency-only fan-out N=${ev.n} P=${ev.p} on one warm worker runtime, ${ev.rounds} interleaved rounds: no subscriber
**${fmt(ev.offMs, 1)} ms**, with a \`brood.events()\` subscriber draining every event (${fmt(ev.eventsPerChild, 1)} events per child, text
deltas included) **${fmt(ev.onMs, 1)} ms** (${fmt(ev.onOverOff, 3)}×). With no subscriber nothing is produced or posted across threads
(test/events), so the fan-out table above is the no-subscriber figure.
`;
}

function codeModeSection(cm) {
  if (!cm) return 'Not run.\n';
  if (cm.error) return `Error: ${cm.error}\n`;
  const row = (name, what, s) => [name, what, s.calls, fmt(s.p50Us), fmt(s.p99Us), fmt(s.meanUs)];
  return `One pool thread, \`codeMode: 'both'\`, a trivial tool whose body stamps \`performance.now()\` in the parent; each sequence is one
assistant message. Gap = time between two consecutive tool bodies.

${table(
  ['sequence', 'gap measures', 'calls', 'p50 µs', 'p99 µs', 'mean µs'],
  [
    row('native', 'one native call (the parent schedules them: no crossing)', cm.native),
    row('in one program', 'one `await tools.noop()` from inside run_code', cm.program),
    row('one call per program', 'program end + next run_code start (warm) + one call', cm.programs),
  ],
)}

Per tool call from inside a program: **${fmt(cm.program.p50Us)} µs** p50, ${fmt(cm.perCallRatio, 2)}× a native call (a program's call
crosses from the driver's thread to the parent and back; a message's native calls are run by the parent). Warm engine start
(next program on a warm sandbox thread: result, dispatch, fresh realm, first call, minus one in-program call): **≈ ${fmt(cm.warmStartUs)} µs**.
Cold start (first run_code of a fresh runtime: sandbox thread start + QuickJS load), median of ${cm.rounds}: **+${fmt(cm.coldExtraMs)} ms**
(turn ${fmt(cm.coldTurnMs)} ms against ${fmt(cm.warmTurnMs)} ms warm).
`;
}

export function markdown(r) {
  const m = r.meta;
  const targets = table(
    ['target', 'where', 'measured', 'met'],
    r.targets.map((t) => [
      t.name,
      t.where,
      t.measured === null ? '—' : `${t.measured} ${t.unit}`,
      t.met ? 'yes' : '**no**',
    ]),
  );
  return `# brood benchmarks${m.quick ? ' (--quick)' : ''}

Run ${m.date} on Node ${m.node}, ${m.platform}, ${m.cpus} CPUs (${m.cpuModel}), load average ${m.loadavgStart.join(' / ')} at start and
${m.loadavgEnd.join(' / ')} at the end (other processes on the machine inflate absolute numbers; ratios are measured in the same run).
Peer: ${m.peer.available ? `${m.peer.name} ${m.peer.version} (agents-as-tools, replay Model, tracing disabled)` : `not run — ${m.peer.reason}`}.
All models are scripted (no network). Total time ${fmt(m.totalMs / 1000, 0)} s. \`npm run bench\` (add \`-- --quick\` for the small run).

## Targets (measured, not asserted)

${targets}

${fanoutSection(r.fanout, m.peer, r.steadyState, r.budget)}
![makespan vs N](makespan.svg)

${wideFanoutSection(r.wideFanout)}
${otherSections(r)}
${crashResumeSection(r.crashResume)}${r.soak ? soakSection(r.soak) : ''}${r.queue ? queueSection(r.queue) : ''}${r.notes?.length ? `## Notes\n\n${r.notes.map((n) => `- ${n}`).join('\n')}\n` : ''}`;
}

function soakSection(sk) {
  if (sk.error) return `## Soak\n\nError: ${sk.error}\n\n`;
  const rows = sk.rows.map((x) => [
    x.runner,
    x.store === 'memory' ? 'default (memorySessions)' : 'fileSessions',
    x.warmChildren,
    x.children,
    fmt(x.ms / 1000, 1),
    `${fmt(x.heapStartMb, 1)} → ${fmt(x.heapEndMb, 1)}`,
    fmt(x.heapGrowthMbPer1k, 3),
    `${fmt(x.rssStartMb, 0)} → ${fmt(x.rssEndMb, 0)}`,
    fmt(x.rssGrowthPct, 1),
    x.threadHeapEndMb.length ? `${x.threadHeapStartMb.join(' / ')} → ${x.threadHeapEndMb.join(' / ')}` : '—',
  ]);
  return `## Soak

One runtime per row runs rounds of a ${sk.n}-child fan-out (two tool steps and an answer per child, scripted model, no
latency), every root disposed after its run. Parent heap and RSS are read after a forced GC at the end of the warm-up and
after the measured children; each pool thread's heap is read after a GC in that thread (a probe model adapter). The
default store's warm-up fills its retention budget (64 MiB of finished trees), the state a long-running service is in.
Targets: heap growth ≤ 0.1 MB per 1,000 children, RSS growth ≤ 10 %, each pool thread heap within 2 MB.

${table(['runner', 'store', 'warm-up children', 'measured children', 's', 'heap MB', 'heap growth MB / 1,000', 'RSS MB', 'RSS growth %', 'thread heaps MB'], rows)}
`;
}

function queueSection(q) {
  if (q.error) return `## Scale-out (queue runner)\n\nError: ${q.error}\n\n`;
  const rows = q.rows.map((x) => [
    x.n,
    x.p,
    fmt(x.idealMs, 0),
    fmt(x.floorMs, 0),
    fmt(x.workerMs, 0),
    fmt(x.queueMs, 0),
    ratio(x.queueMs, x.floorMs),
    ratio(x.workerMs, x.floorMs),
    ratio(x.queueMs, x.workerMs),
    fmt(x.perChildOverheadMs, 2),
    x.queueCpuMs
      ? `${fmt(x.queueCpuMs.parent, 0)} / ${fmt(x.queueCpuMs.hosts, 0)} / ${fmt(x.queueCpuMs.redis, 0)}`
      : '—',
    x.queueCpuPerChildMs
      ? `${fmt(x.queueCpuPerChildMs.parent, 2)} / ${fmt(x.queueCpuPerChildMs.hosts, 2)} / ${fmt(x.queueCpuPerChildMs.redis, 2)} / ${fmt(x.queueCpuPerChildMs.total, 2)}`
      : '—',
    fmt(x.cpuBoundMinimumMs, 0),
    fmt(x.queueCpuUtilization, 2),
    x.redisCommandsPerChild
      ? `${fmt(x.redisCallsPerChild, 1)}: ${x.redisCommandsPerChild
          .slice(0, 3)
          .map((c) => `${c.command} ${fmt(c.calls, 2)}`)
          .join(', ')}`
      : '—',
  ]);
  return `## Scale-out (queue runner, \`--queue\`)

The latency-only fan-out (C = 0, L = ${q.L} ms, K = 3) with the parent on the local pool and the children's drivers on ${q.hosts}
local \`brood host\` processes (${q.hostThreads} thread(s) each) through a private Redis; every tool call goes back to the parent.
Interleaved with the floor and the worker runner per repetition, after one untimed first run of each configuration. Per-child overhead = (queue − floor) / N: makespan above the floor
amortised over the children (P run at once), not a per-child latency. Target: queue/floor ≤ 1.5 at N=256. The hosts share this
machine's cores with the parent and Redis, so this measures the protocol's cost, not scale-out gains.

CPU of one queued run (ms, from /proc in 10 ms ticks: parent / both hosts / Redis), the same per child (parent / hosts /
Redis / total; target ≤ 2.0 ms in total at N=256), the least wall time it allows on this
machine's cores (total CPU ÷ cores) and the share of the cores it kept busy over its makespan: when that minimum is above 1.5× the
floor, the target cannot be met here whatever the scheduling. Redis calls per child (INFO commandstats over the same run; a
script's inner commands count too) and the three commands that cost Redis most: EVALSHA are BullMQ's scripts (a job's add, take
and finish), LPUSH and BLMPOP the link's batches.

${table(['N', 'P', 'ideal', 'floor', 'worker', 'queue', 'queue/floor', 'worker/floor', 'queue÷worker', 'overhead ms/child', 'CPU parent / hosts / Redis ms', 'CPU per child parent / hosts / Redis / total ms', 'CPU-bound minimum ms', 'cores busy', 'Redis calls per child'], rows)}

`;
}

export async function writeReport(results, dir) {
  await mkdir(dir, { recursive: true });
  await writeFile(new URL('latest.json', dir), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(new URL('latest.md', dir), markdown(results));
  await writeFile(new URL('makespan.svg', dir), `${makespanSvg(results.fanout, results.meta)}\n`);
}

function steadySection(st) {
  if (!st) return '';
  if (st.error) return `Steady state: error: ${st.error}\n`;
  return `Steady state (not a SPEC row): the latency-only N=${st.n} P=${st.p} fan-out on fresh runtimes after ${st.warmRuns} untimed runs each, median
of ${st.reps}: floor ${fmt(st.floorMs, 0)} ms, worker ${fmt(st.workerMs, 0)} ms (**${fmt(st.workerOverFloor, 2)}× floor**), inline ${fmt(st.inlineMs, 0)} ms
(${fmt(st.inlineOverFloor, 2)}×). Each pool thread is its own V8 isolate and JIT-compiles the driver separately; TurboFan keeps recompiling
hot driver functions (deoptimizing on new object shapes) for the first ~2,500 children of a runtime, so the table's "warm" rows,
which have run each fan-out once or twice, still carry part of that compile work on the same two cores.
CPU per child over the timed runs (ms, /proc in 10 ms ticks; main thread / the runtime's own threads / the threads that were there
before it, i.e. V8's compiler and GC helpers): worker ${cpuGroups(st.cpuMsPerChild?.worker)}, inline ${cpuGroups(st.cpuMsPerChild?.inline)}.
`;
}

function budgetSection(b, st) {
  if (!b) return '';
  if (b.error) return `Main-thread budget: error: ${b.error}\n`;
  const rows = b.rows.map((r) => `${fmt(r.mainMsPerChild, 1)} ms → ${fmt(r.overFloor, 3)}×`).join(', ');
  const main = st?.cpuMsPerChild?.worker?.main;
  return `Main-thread budget (not a SPEC row): the floor's N=${b.n} P=${b.p} latency-only schedule with m ms of synchronous work per
child on the main thread and nothing else (no thread, no crossing, no driver; ${b.share.start * 100} % at the child's start, ${b.share.step * 100} % at each tool
step, ${b.share.end * 100} % at its end), each m interleaved with the bare floor, median of ${b.reps}: ${rows}. The ≤ 1.05× target leaves the
parent **${fmt(b.allowedMainMsPerChildAt105, 2)} ms of main-thread work per child**${main === undefined ? '' : `; the worker runner's parent used ${fmt(main, 2)} ms per child at steady state (above)`}.
`;
}
