/**
 * `brood inspect <dir> [--json]`: the delegation tree stored in a fileSessions directory, with each
 * agent's label, depth, stop reasons, own token usage and duration, and the reports each continuable
 * child made to its parent.
 */
import { knownEvent } from '../sessions/event-types.js';
import type { SessionEvent } from '../types.js';
import { type CliStreams, commandHelp, parseFlags } from './cli-errors.js';
import { formatMs, formatTokens, table, truncate } from './format.js';
import { loadSessionDir } from './session-dir.js';
import { summarizeReasons, type AgentNode } from './tree-state.js';

export const INSPECT_USAGE = 'brood inspect <dir> [--json]';
export const INSPECT_HELP = commandHelp(INSPECT_USAGE, [
  'Prints the delegation trees stored in a fileSessions directory: each agent with its label, depth,',
  'mode, stop reasons, turns, own token usage, usage of its whole subtree and duration, then any',
  'diagnostics and the reports continuable children made to their parents. --json prints the same',
  'rows as JSON.',
]);

export async function inspectCommand(args: string[], { stdout }: CliStreams): Promise<number> {
  const { values, positionals } = parseFlags('inspect', args, { json: { type: 'boolean' } }, ['dir']);
  const [dir] = positionals;
  const { tree, events } = await loadSessionDir('inspect', dir);
  const ordered = tree.ordered();
  const reports = reportsByChild(events);
  const subtree = subtreeTotals(ordered.map(({ node }) => node));
  if (values.json === true) {
    stdout.write(
      `${JSON.stringify(
        ordered.map(({ node }) => ({
          ...toJson(node),
          subtreeUsage: subtree.get(node.id),
          reports: reports.get(node.id) ?? [],
        })),
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  const roots = ordered.filter(({ prefix }) => prefix === '').length;
  const rows = ordered.map(({ node, prefix }) => [
    prefix + node.id,
    truncate(node.label, 40),
    String(node.depth),
    node.mode,
    summarizeReasons(node.stopReasons),
    String(node.turns),
    formatTokens(node.inputTokens, node.outputTokens),
    formatTokens(subtree.get(node.id)?.inputTokens ?? 0, subtree.get(node.id)?.outputTokens ?? 0),
    formatMs(node.lastEventAt - node.createdAt),
  ]);
  const headers = ['agent', 'label', 'depth', 'mode', 'stop', 'turns', 'tokens in/out', 'subtree in/out', 'duration'];
  const lines = table(headers, rows);
  stdout.write(`${dir}: ${ordered.length} sessions, ${roots} tree${roots === 1 ? '' : 's'}\n`);
  stdout.write(`${lines.join('\n')}\n`);
  for (const { node } of ordered) {
    for (const diagnostic of node.diagnostics) stdout.write(`  ${node.id}: ${diagnostic}\n`);
  }
  for (const { node } of ordered) {
    for (const report of reports.get(node.id) ?? [])
      stdout.write(`  ${node.id} reported (${report.messageId}): ${truncate(report.output, 100)}\n`);
  }
  return 0;
}

interface ReportRow {
  messageId: string;
  time: number;
  output: string;
}

/** A report is a message in the parent's session that names its child (`from`); listed under that child. */
function reportsByChild(sessions: Map<string, SessionEvent[]>): Map<string, ReportRow[]> {
  const byChild = new Map<string, ReportRow[]>();
  for (const events of sessions.values()) {
    for (const logged of events) {
      const event = knownEvent(logged);
      if (event?.type !== 'user/message' || event.data.source !== 'subagent-report') continue;
      const { id, text, from } = event.data;
      if (from === undefined) continue;
      // The message is `Background subagent <id> reported:` and the output on the next line.
      const output = text.slice(text.indexOf('\n') + 1);
      byChild.set(from, [...(byChild.get(from) ?? []), { messageId: id, time: logged.time, output }]);
    }
  }
  return byChild; // a child's reports are all in its parent's log, in the order they were made
}

/** Each agent's own tokens plus every descendant's (every request counted once, in its own session). */
function subtreeTotals(nodes: readonly AgentNode[]): Map<string, { inputTokens: number; outputTokens: number }> {
  const totals = new Map(
    nodes.map((node) => [node.id, { inputTokens: node.inputTokens, outputTokens: node.outputTokens }]),
  );
  const ids = new Set(nodes.map((node) => node.id));
  for (const node of nodes) {
    const seen = new Set<string>([node.id]);
    // Walks up the parent links (a stored cycle is walked once).
    for (let up = node.parentId; up !== undefined && ids.has(up) && !seen.has(up); ) {
      seen.add(up);
      const total = totals.get(up);
      if (total) {
        total.inputTokens += node.inputTokens;
        total.outputTokens += node.outputTokens;
      }
      up = nodes.find((candidate) => candidate.id === up)?.parentId;
    }
  }
  return totals;
}

function toJson(node: AgentNode): Record<string, unknown> {
  return {
    id: node.id,
    parentId: node.parentId ?? null,
    depth: node.depth,
    label: node.label,
    mode: node.mode,
    stopReasons: node.stopReasons,
    diagnostics: node.diagnostics,
    turns: node.turns,
    usage: { inputTokens: node.inputTokens, outputTokens: node.outputTokens },
    createdAt: node.createdAt,
    durationMs: node.lastEventAt - node.createdAt,
  };
}
