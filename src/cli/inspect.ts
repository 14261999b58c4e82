/**
 * `brood inspect <dir> [<id> | --last] [--json]`: the delegation trees stored in a fileSessions
 * directory — or one of them: the tree under `<id>`, or the most recently started root's with `--last`
 * — with each agent's label, depth, start time, stop reasons, own token usage and duration, and the
 * reports each continuable child made to its parent.
 */
import { knownEvent } from '../sessions/event-types.js';
import type { SessionEvent } from '../types.js';
import { type CliStreams, commandHelp, parseFlags, UsageError } from './cli-errors.js';
import { formatMs, formatTokens, table, truncate } from './format.js';
import { loadSessionDir } from './session-dir.js';
import { type AgentNode, summarizeReasons, TreeState } from './tree-state.js';

export const INSPECT_USAGE = 'brood inspect <dir> [<id> | --last] [--json]';
export const INSPECT_HELP = commandHelp(INSPECT_USAGE, [
  'Prints the delegation trees stored in a fileSessions directory: each agent with its label, depth,',
  'mode, start time, stop reasons, turns, own token usage, usage of its whole subtree and duration,',
  'then any diagnostics and the reports continuable children made to their parents. With <id>, only',
  'the tree under that session; with --last, only the tree of the root started last. --json prints',
  'the same rows as JSON.',
]);

export async function inspectCommand(args: string[], { stdout }: CliStreams): Promise<number> {
  const {
    values,
    positionals: [dir],
    optionals: [id],
  } = parseFlags('inspect', args, { json: { type: 'boolean' }, last: { type: 'boolean' } }, ['dir'], ['id']);
  if (id !== undefined && values.last === true) throw new UsageError('brood inspect: give <id> or --last, not both');
  const { tree: whole, events } = await loadSessionDir('inspect', dir);
  const rootId = id ?? (values.last === true ? lastRoot(whole) : undefined);
  const tree = rootId === undefined ? whole : subtreeOf(whole, rootId, dir);
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
  const rows = ordered.map(({ node, prefix }) => [
    prefix + node.id,
    truncate(node.label, 40),
    String(node.depth),
    node.mode,
    startTime(node.createdAt),
    summarizeReasons(node.stopReasons),
    String(node.turns),
    formatTokens(node.inputTokens, node.outputTokens),
    formatTokens(subtree.get(node.id)?.inputTokens ?? 0, subtree.get(node.id)?.outputTokens ?? 0),
    formatMs(node.lastEventAt - node.createdAt),
  ]);
  const headers = [
    'agent',
    'label',
    'depth',
    'mode',
    'started',
    'stop',
    'turns',
    'tokens in/out',
    'subtree in/out',
    'duration',
  ];
  const lines = table(headers, rows);
  stdout.write(`${heading(dir, whole, ordered.length, rootId)}\n`);
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

/** `dir: 6 sessions, 2 trees`, or for one tree `dir: 4 of 6 sessions, the tree of agent_…`. */
function heading(dir: string, whole: TreeState, shown: number, rootId: string | undefined): string {
  if (rootId !== undefined) return `${dir}: ${shown} of ${whole.nodes.size} sessions, the tree of ${rootId}`;
  const roots = whole.ordered().filter(({ prefix }) => prefix === '').length;
  return `${dir}: ${shown} sessions, ${roots} tree${roots === 1 ? '' : 's'}`;
}

/** The root (a session without a parent in the directory) that started last. */
function lastRoot(tree: TreeState): string {
  const roots = tree.ordered().filter(({ prefix }) => prefix === '');
  if (roots.length === 0) throw new UsageError('brood inspect: no session without a parent to start from');
  return roots.reduce((latest, root) => (root.node.createdAt >= latest.node.createdAt ? root : latest)).node.id;
}

/** The sessions under `id` (itself included) as a tree of their own; an unknown id is a usage error. */
function subtreeOf(whole: TreeState, id: string, dir: string): TreeState {
  const nodes = whole.subtree(id);
  if (nodes === undefined) throw new UsageError(`brood inspect: no session ${id} in ${dir}`);
  const tree = new TreeState();
  for (const node of nodes) tree.nodes.set(node.id, node);
  return tree;
}

/** Local date and time to the second: `2026-12-06 05:40:08`. */
export function startTime(ms: number): string {
  const at = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  const date = `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}`;
  return `${date} ${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
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
