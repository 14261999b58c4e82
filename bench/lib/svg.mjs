// Makespan vs N, hand-written SVG (no chart dependency): one panel per (P, C), one line per system,
// with the calibrated floor and the ideal as dashed references. x is log2(N), y is linear from 0.
const SERIES = [
  { key: 'worker', label: 'brood worker', color: '#1f77b4', dash: '' },
  { key: 'inline', label: 'brood inline', color: '#ff7f0e', dash: '' },
  { key: 'peer', label: 'OpenAI Agents SDK', color: '#2ca02c', dash: '' },
  { key: 'floor', label: 'calibrated floor', color: '#555', dash: '6 4' },
  { key: 'ideal', label: 'ideal', color: '#999', dash: '2 3' },
];
const W = 360;
const H = 250;
const M = { l: 56, r: 12, t: 28, b: 40 };
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

function value(row, key) {
  return key === 'ideal' ? row.idealMs : row[key]?.makespanMs;
}

function niceMax(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((m) => m >= v);
}

function panel(rows, title, ox, oy) {
  const ns = [...new Set(rows.map((r) => r.n))].sort((a, b) => a - b);
  const ymax = niceMax(Math.max(...rows.flatMap((r) => SERIES.map((s) => value(r, s.key)).filter(Number.isFinite))));
  const lx = (n) =>
    ns.length === 1 ? 0.5 : (Math.log2(n) - Math.log2(ns[0])) / (Math.log2(ns.at(-1)) - Math.log2(ns[0]));
  const x = (n) => ox + M.l + lx(n) * (W - M.l - M.r);
  const y = (v) => oy + H - M.b - (v / ymax) * (H - M.t - M.b);
  const out = [`<text x="${ox + W / 2}" y="${oy + 16}" text-anchor="middle" font-weight="bold">${esc(title)}</text>`];
  for (let i = 0; i <= 4; i++) {
    const v = (ymax * i) / 4;
    out.push(`<line x1="${ox + M.l}" x2="${ox + W - M.r}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>`);
    out.push(
      `<text x="${ox + M.l - 6}" y="${y(v) + 4}" text-anchor="end">${v >= 1000 ? `${v / 1000}s` : `${v}ms`}</text>`,
    );
  }
  for (const n of ns) out.push(`<text x="${x(n)}" y="${oy + H - M.b + 16}" text-anchor="middle">N=${n}</text>`);
  out.push(`<line x1="${ox + M.l}" x2="${ox + M.l}" y1="${oy + M.t}" y2="${oy + H - M.b}" stroke="#333"/>`);
  out.push(`<line x1="${ox + M.l}" x2="${ox + W - M.r}" y1="${oy + H - M.b}" y2="${oy + H - M.b}" stroke="#333"/>`);
  for (const s of SERIES) {
    const pts = ns
      .map((n) => [
        n,
        value(
          rows.find((r) => r.n === n),
          s.key,
        ),
      ])
      .filter(([, v]) => Number.isFinite(v));
    if (pts.length === 0) continue;
    const d = pts.map(([n, v]) => `${x(n).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    out.push(`<polyline points="${d}" fill="none" stroke="${s.color}" stroke-width="2" stroke-dasharray="${s.dash}"/>`);
    for (const [n, v] of pts)
      out.push(
        `<circle cx="${x(n).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${s.color}"><title>${esc(s.label)} N=${n}: ${v} ms</title></circle>`,
      );
  }
  return out.join('\n');
}

export function makespanSvg(fanout, meta) {
  const groups = [];
  for (const cpuMs of [0, fanout.C])
    for (const p of [8, 64]) groups.push({ p, cpuMs, rows: fanout.rows.filter((r) => r.p === p && r.cpuMs === cpuMs) });
  const width = 2 * W;
  const height = 2 * H + 70;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">Fan-out makespan vs N (K=3 requests per child, L=${fanout.L} ms)</text>`,
    `<text x="${width / 2}" y="34" text-anchor="middle" fill="#555">${esc(`Node ${meta.node}, ${meta.cpus} CPUs, ${meta.date.slice(0, 10)}${meta.quick ? ', --quick' : ''}`)}</text>`,
  ];
  groups.forEach((g, i) => {
    parts.push(panel(g.rows, `P=${g.p}, C=${g.cpuMs} ms`, (i % 2) * W, 40 + Math.floor(i / 2) * H));
  });
  const ly = height - 16;
  let lx = 20;
  for (const s of SERIES) {
    parts.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2" stroke-dasharray="${s.dash}"/>`,
    );
    parts.push(`<text x="${lx + 30}" y="${ly + 4}">${esc(s.label)}</text>`);
    lx += 40 + s.label.length * 6.5;
  }
  parts.push('</svg>');
  return parts.join('\n');
}
