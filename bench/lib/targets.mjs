// The targets, evaluated against measured numbers. They are reported, never asserted:
// a miss is a finding, not a failed run.
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);

/** The headline fan-out row: N=256 P=64 in the full run; the largest N at P=64 in --quick. */
function headline(rows, cpuMs) {
  const candidates = rows.filter((r) => r.p === 64 && r.cpuMs === cpuMs).sort((a, b) => b.n - a.n);
  return candidates[0];
}

export function evaluateTargets(results) {
  const rows = results.fanout.rows;
  const lat = headline(rows, 0);
  const cpu = headline(rows, results.fanout.C);
  const t = [];
  const add = (name, where, measured, unit, ok) => t.push({ name, where, measured: Number.isFinite(measured) ? Number(measured.toFixed(3)) : null, unit, met: Number.isFinite(measured) ? ok(measured) : false });
  add('fan-out latency-only within 5% of the calibrated floor', `N=${lat.n} P=64 C=0, worker`, ratio(lat.worker.makespanMs, lat.floor.makespanMs), '× floor', (v) => v <= 1.05);
  add(`CPU case: worker ≥ 1.6× faster than inline (${results.meta.cpus} cores)`, `N=${cpu.n} P=64 C=${cpu.cpuMs}`, ratio(cpu.inline.makespanMs, cpu.worker.makespanMs), '× speedup', (v) => v >= 1.6);
  add('CPU case: parent event-loop delay p99 < 20 ms', `N=${cpu.n} P=64 C=${cpu.cpuMs}, worker`, cpu.worker.loopDelayP99Ms, 'ms', (v) => v < 20);
  add('start latency p50 < 2 ms (warm pool)', 'worker', results.startLatency.worker?.p50Ms, 'ms', (v) => v < 2);
  add('tool RPC p50 < 100 µs', 'worker', results.toolRpc.worker?.p50Us, 'µs', (v) => v < 100);
  add('parked continuable < 50 KB RSS each', `${results.parked.children} children`, results.parked.rssPerChildKb, 'KB', (v) => v < 50);
  return t;
}
