// The "Wide fan-out" section of latest.md (bench/wide-fanout.mjs).
const fmt = (v, digits = 1) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );
const SYSTEMS = ['floor', 'worker', 'inline', 'peer'];

function systemRow(row, name) {
  const s = row[name];
  if (!s || s.makespanMs === undefined)
    return [row.n, name, s?.skipped ?? (s?.error ? 'error' : '—'), '', '', '', '', ''];
  const c = s.cpuMsPerChild;
  return [
    row.n,
    name,
    fmt(s.makespanMs, 0),
    fmt(s.makespanMs / row.floor?.makespanMs, 2),
    fmt(s.makespanMs / row.idealMs, 2),
    fmt(s.rssGrowthPerChildKb),
    c ? `${fmt(c.main, 2)} / ${fmt(c.started, 2)} / ${fmt(c.background, 2)}` : '—',
    fmt(s.loopDelayP99Ms),
  ];
}

function burstRow(row, name) {
  const b = row[name]?.startBurst;
  if (!b || b.error) return [row.n, name, b?.error ?? '—', '', '', ''];
  return [row.n, name, fmt(b.firstChildMs, 2), fmt(b.medianChildMs), fmt(b.lastChildMs), fmt(b.perChildUs)];
}

export function wideFanoutSection(w) {
  if (!w) return '';
  if (w.error) return `## Wide fan-out\n\nError: ${w.error}\n`;
  const errors = w.rows.flatMap((row) =>
    SYSTEMS.filter((name) => row[name]?.error).map((name) => `- N=${row.n} ${name}: ${row[name].error}`),
  );
  return `## Wide fan-out

One root delegates N children in one message with P = N; every child makes K = ${w.K} requests (two tool steps, then its answer)
at L = ${w.L} ms, so the ideal is ${w.idealMs} ms whatever N is. Floor: the same schedule on bare timers, no brood code. One run
per system and N, each on a runtime created for that row and warmed up with a 64-child fan-out at L = 20 ms; the RSS baseline
is taken after a forced GC and the growth is the peak (sampled every 25 ms) over N. CPU per child by thread group: main /
started (the runtime's pool) / background (V8's compiler and GC helpers, libuv), over the measured run.

${table(
  [
    'N',
    'system',
    'makespan ms',
    '÷ floor',
    '÷ ideal',
    'RSS growth KB/child',
    'CPU ms/child main / pool / helpers',
    'loop p99 ms',
  ],
  w.rows.flatMap((row) => SYSTEMS.map((name) => systemRow(row, name))),
)}

**Start burst**: from the root's answer (its \`assistant/message\` with the N calls reaching the parent's session store) to each
child's first \`model/request\` reaching it (a store wrapper stamps appends with \`performance.now()\`). Per child = the N-th
child's time ÷ N.

${table(
  ['N', 'runner', 'first child ms', 'median child ms', 'N-th child ms', 'µs per child'],
  w.rows.flatMap((row) => ['worker', 'inline'].map((name) => burstRow(row, name))),
)}
${errors.length ? `\n${errors.join('\n')}\n` : ''}`;
}
