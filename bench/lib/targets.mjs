// The performance targets, evaluated against measured numbers. They are reported, never asserted:
// a miss is a finding, not a failed run.
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);

/** The headline fan-out row: N=256 P=64 in the full run; the largest N at P=64 in --quick. */
function headline(rows, cpuMs, p = 64) {
  const candidates = rows.filter((r) => r.p === p && r.cpuMs === cpuMs).sort((a, b) => b.n - a.n);
  return candidates[0];
}

export function evaluateTargets(results) {
  const rows = results.fanout.rows;
  const lat = headline(rows, 0);
  const cpu = headline(rows, results.fanout.C);
  const t = [];
  const add = (name, where, measured, unit, ok) =>
    t.push({
      name,
      where,
      measured: Number.isFinite(measured) ? Number(measured.toFixed(3)) : null,
      unit,
      met: Number.isFinite(measured) ? ok(measured) : false,
    });
  add(
    'fan-out latency-only within 5% of the calibrated floor',
    `N=${lat.n} P=64 C=0, worker`,
    ratio(lat.worker.makespanMs, lat.floor.makespanMs),
    '× floor',
    (v) => v <= 1.05,
  );
  add(
    `CPU case: worker ≥ 1.6× faster than inline (${results.meta.cpus} cores)`,
    `N=${cpu.n} P=64 C=${cpu.cpuMs}`,
    ratio(cpu.inline.makespanMs, cpu.worker.makespanMs),
    '× speedup',
    (v) => v >= 1.6,
  );
  add(
    'CPU case: parent event-loop delay p99 < 20 ms',
    `N=${cpu.n} P=64 C=${cpu.cpuMs}, worker`,
    cpu.worker.loopDelayP99Ms,
    'ms',
    (v) => v < 20,
  );
  add('start latency p50 < 2 ms (warm pool)', 'worker', results.startLatency.worker?.p50Ms, 'ms', (v) => v < 2);
  add('tool RPC p50 < 100 µs', 'worker', results.toolRpc.worker?.p50Us, 'µs', (v) => v < 100);
  add(
    'parked continuable < 50 KB RSS each',
    `${results.parked.children} children`,
    results.parked.rssPerChildKb,
    'KB',
    (v) => v < 50,
  );
  // The worker boundary's stricter targets, added after the SPEC ones so earlier entries keep their places.
  const row = (n, p, cpuMs) => rows.find((r) => r.n === n && r.p === p && r.cpuMs === cpuMs);
  for (const n of [256, 64]) {
    const r = row(n, 64, 0);
    if (!r) continue;
    add(
      'worker boundary: latency-only fan-out ≤ 1.05× the floor',
      `N=${n} P=64 C=0, worker`,
      ratio(r.worker.makespanMs, r.floor.makespanMs),
      '× floor',
      (v) => v <= 1.05,
    );
    add(
      'worker boundary: latency-only fan-out never slower than inline',
      `N=${n} P=64 C=0`,
      ratio(r.worker.makespanMs, r.inline.makespanMs),
      '× inline',
      (v) => v <= 1,
    );
  }
  const worstLoop = Math.max(...rows.map((r) => r.worker?.loopDelayP99Ms ?? NaN));
  add(
    'worker boundary: parent event-loop delay p99 ≤ 10 ms in every fan-out row',
    'worst worker row',
    worstLoop,
    'ms',
    (v) => v <= 10,
  );
  add('worker boundary: tool RPC p50 ≤ 60 µs (proxied)', 'worker', results.toolRpc.worker?.p50Us, 'µs', (v) => v <= 60);
  add(
    'worker boundary: tool RPC p99 ≤ 1 ms (proxied)',
    'worker',
    results.toolRpc.worker?.p99Us,
    'µs',
    (v) => v <= 1000,
  );
  add(
    'worker boundary: deep tree ≤ 4 ms per level',
    'worker, marginal slope',
    results.deepTree.byRunner?.worker?.marginalOverheadPerLevelMs,
    'ms',
    (v) => v <= 4,
  );
  for (const p of [8, 64]) {
    const r = headline(rows, results.fanout.C, p);
    if (r)
      add(
        'worker boundary: CPU fan-out ≤ 1.10× the floor',
        `N=${r.n} P=${p} C=${r.cpuMs}, worker`,
        ratio(r.worker.makespanMs, r.floor.makespanMs),
        '× floor',
        (v) => v <= 1.1,
      );
  }
  const warm = row(16, 8, 0);
  add(
    'worker boundary: first fan-out of a fresh runtime ≤ 1.5× a warm one',
    'worker/8, N=16 C=0',
    ratio(results.fanout.coldFirstRunMs?.['worker/8'], warm?.worker.makespanMs),
    '× warm',
    (v) => v <= 1.5,
  );
  add(
    'worker boundary: start → first request p50 ≤ 0.5 ms',
    'worker',
    results.startLatency.worker?.p50Ms,
    'ms',
    (v) => v <= 0.5,
  );
  add(
    'worker boundary: parked continuable ≤ 40 KB RSS each',
    `${results.parked.children} children`,
    results.parked.rssPerChildKb,
    'KB',
    (v) => v <= 40,
  );
  if (lat.peer?.makespanMs !== undefined)
    add(
      'worker boundary: ≥ 3× faster than the peer, latency-only',
      `N=${lat.n} P=64 C=0`,
      ratio(lat.peer.makespanMs, lat.worker.makespanMs),
      '× peer',
      (v) => v >= 3,
    );
  if (cpu.peer?.makespanMs !== undefined)
    add(
      'worker boundary: ≥ 2× faster than the peer, with CPU',
      `N=${cpu.n} P=64 C=${cpu.cpuMs}`,
      ratio(cpu.peer.makespanMs, cpu.worker.makespanMs),
      '× peer',
      (v) => v >= 2,
    );
  // An abort ends the turn within 100 ms whatever the driver waits on (the slowest wait's p99).
  const aborts = results.abortLatency;
  if (aborts?.worker)
    add(
      'abort: abort → turn end ≤ 100 ms, whatever the driver waits on',
      'worker, p99 of the slowest wait',
      Math.max(...aborts.waits.map((wait) => aborts.worker[wait]?.p99Ms ?? Number.NaN)),
      'ms',
      (v) => v <= 100,
    );
  // Approvals park only their own call.
  const ap = results.approvals;
  if (ap?.freeRatio !== undefined) {
    add(
      'approvals: the 56 siblings of 8 approvals finish within 1.05× of the run without approvals',
      '64 children, 8 granted after 100 ms',
      ap.freeRatio,
      '×',
      (v) => v <= 1.05,
    );
    add(
      'approvals: the run takes at most 100 ms + 1.05× the run without approvals',
      '64 children, 8 granted after 100 ms',
      ap.makespanOverBudget,
      '× budget',
      (v) => v <= 1,
    );
  }
  // Governed fan-out against a rate-limited provider, and no cost without limits.
  const governed = results.governed;
  if (governed?.rateLimited) {
    const { matching, tooHigh } = governed.rateLimited;
    add(
      'admission limits: rateLimited, limits matching the server ≤ 1.10× ideal',
      `N=${governed.rateLimited.n}`,
      matching.ratio,
      '× ideal',
      (v) => v <= 1.1,
    );
    add(
      'admission limits: rateLimited, limits matching the server: no 429',
      `N=${governed.rateLimited.n}, server at ${matching.serverPriority ?? 'normal'} priority`,
      matching.throttled,
      '429s',
      (v) => v === 0,
    );
    add(
      'admission limits: rateLimited, limits 25 % too high ≤ 1.30× ideal',
      `N=${governed.rateLimited.n}`,
      tooHigh.ratio,
      '× ideal',
      (v) => v <= 1.3,
    );
  }
  if (governed?.unlimitedOverhead)
    add(
      'admission limits: an unreachable limit costs ≤ 1.03×',
      'N=256 P=64',
      governed.unlimitedOverhead.ratio,
      '×',
      (v) => v <= 1.03,
    );
  for (const x of results.soak?.rows ?? []) {
    const where = `${x.runner}, ${x.store === 'memory' ? 'default store' : 'fileSessions'}, ${x.children} children`;
    add('soak: parent heap growth ≤ 0.1 MB per 1,000 children', where, x.heapGrowthMbPer1k, 'MB', (v) => v <= 0.1);
    add('soak: RSS grows by at most 10 %', where, x.rssGrowthPct, '%', (v) => v <= 10);
    if (x.runner === 'worker')
      add(
        'soak: each pool thread heap within 2 MB of its post-warm-up size',
        where,
        x.threadHeapGrowthMbMax,
        'MB',
        (v) => v <= 2,
      );
  }
  addWideFanoutTargets(results, add);
  addCrashResumeTargets(results, add);
  return t;
}

/** Crash resume (bench/crash-resume.mjs): what write before effect costs, and recovery at scale. */
function addCrashResumeTargets(results, add) {
  const { ordering, recovery } = results.crashResume ?? {};
  if (ordering?.orderedRatio !== undefined)
    add(
      'crash resume: write before effect costs ≤ 1.05× on a latency-only fan-out',
      `N=${ordering.n} P=${ordering.p} C=0, worker, fileSessions`,
      ordering.orderedRatio,
      '× no ordering',
      (v) => v <= 1.05,
    );
  if (recovery?.allRunningAgainMs !== undefined) {
    add(
      'crash resume: every interrupted agent running again ≤ 1 s after recover()',
      `${recovery.children} children, ${recovery.interruptedAgents} interrupted`,
      recovery.allRunningAgainMs,
      'ms',
      (v) => v <= 1000,
    );
    add(
      'crash resume: model requests ≤ uninterrupted run + in flight at the kill',
      `${recovery.children} children`,
      recovery.totalRequests - recovery.requestBound,
      'requests over the bound',
      (v) => v <= 0,
    );
  }
}

/** Wide fan-out (bench/wide-fanout.mjs) and parked children at scale. */
function addWideFanoutTargets(results, add) {
  const ceiling = { 1000: 1.25, 10000: 1.5 };
  for (const row of results.wideFanout?.rows ?? []) {
    const { worker, inline, floor } = row;
    if (ceiling[row.n] !== undefined)
      add(
        `wide fan-out ≤ ${ceiling[row.n]}× the floor`,
        `N=${row.n} P=N L=${results.wideFanout.L} ms, worker`,
        ratio(worker?.makespanMs, floor?.makespanMs),
        '× floor',
        (v) => v <= ceiling[row.n],
      );
    add(
      'wide fan-out: worker never slower than inline',
      `N=${row.n}`,
      ratio(worker?.makespanMs, inline?.makespanMs),
      '× inline',
      (v) => v <= 1,
    );
    add(
      'wide fan-out: RSS growth ≤ 40 KB per running child',
      `N=${row.n}, worker`,
      worker?.rssGrowthPerChildKb,
      'KB',
      (v) => v <= 40,
    );
    add('wide fan-out: parent loop p99 ≤ 20 ms', `N=${row.n}, worker`, worker?.loopDelayP99Ms, 'ms', (v) => v <= 20);
  }
  const parked = results.parked;
  if (parked?.children !== undefined) {
    add(
      'parked continuable ≤ 30 KB RSS each',
      `${parked.children} children`,
      parked.rssPerChildKb,
      'KB',
      (v) => v <= 30,
    );
    add(
      'followup to a parked child starts ≤ 5 ms p99',
      `${parked.children} parked, ${parked.followup?.samples ?? 0} followups`,
      parked.followup?.p99Ms,
      'ms',
      (v) => v <= 5,
    );
  }
}
