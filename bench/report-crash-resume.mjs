// The "Crash resume" section of latest.md (bench/crash-resume.mjs).
const fmt = (v, digits = 1) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );

function orderingPart(o) {
  if (!o) return '';
  if (o.error) return `Fan-out orderings: error: ${o.error}\n`;
  const base = o.makespanMs['no ordering'];
  const rows = Object.entries(o.makespanMs).map(([name, ms]) => [
    name,
    fmt(ms, 0),
    fmt(ms / base, 3),
    o.samplesMs[name].map((v) => fmt(v, 0)).join(', '),
  ]);
  return `Latency-only fan-out N = ${o.n}, P = ${o.p}, C = 0 (ideal ${o.idealMs} ms), worker runner, on \`fileSessions\`: with write before
effect (a tool body starts once its \`tool/call\` is written), without it (a store wrapper whose appends resolve at once, the
ordering before crash resume), and with \`sync: 'step'\` (fsynced, group-committed). Interleaved, median of ${o.reps}.

${table(['ordering', 'makespan ms', '÷ no ordering', 'samples ms'], rows)}
`;
}

function recoveryPart(r) {
  if (!r) return '';
  if (r.error) return `Recovery: error: ${r.error}\n`;
  return `Recovery of a ${r.children}-child tree (root → ${r.children} children, each: a tool step, then its answer, L = 20 ms at a
loopback server in the bench process) run by a child process on \`fileSessions\` and SIGKILLed once ~half the children had
sent their second request; then \`recover()\` in the bench process. "Running again": the agent's \`recovered\` event.

${table(
  [
    'interrupted agents',
    'running again',
    'recover() resolved ms',
    'first / median / all running again ms',
    'root',
    'requests',
    'uninterrupted + in flight at kill',
  ],
  [
    [
      r.interruptedAgents,
      r.resumedAgents,
      fmt(r.recoverResolvedMs),
      `${fmt(r.firstRunningAgainMs)} / ${fmt(r.medianRunningAgainMs)} / ${fmt(r.allRunningAgainMs)}`,
      r.rootStopReason ?? '—',
      r.totalRequests,
      `${r.uninterruptedRequests} + ${r.inFlightAtKill} = ${r.requestBound}`,
    ],
  ],
)}

In flight at the kill: requests sent whose answer is not in the log (a request the server answered but the killed process
had not logged counts: it never had it).
`;
}

export function crashResumeSection(c) {
  if (!c) return '';
  if (c.error) return `## Crash resume\n\nError: ${c.error}\n\n`;
  return `## Crash resume

${orderingPart(c.ordering)}
${recoveryPart(c.recovery)}
`;
}
