/**
 * `brood inspect <dir> [--json]`: the delegation tree stored in a fileSessions directory, with each
 * agent's label, depth, stop reasons, own token usage and duration.
 */
import { commandHelp, parseFlags } from './cli-errors.js';
import { formatMs, formatTokens, table, truncate } from './format.js';
import { loadSessionDir } from './session-dir.js';
import { summarizeReasons, type AgentNode } from './tree-state.js';

export const INSPECT_USAGE = 'brood inspect <dir> [--json]';
export const INSPECT_HELP = commandHelp(INSPECT_USAGE, [
  'Prints the delegation trees stored in a fileSessions directory: each agent with its label, depth,',
  'mode, stop reasons, turns, own token usage and duration, then any diagnostics. --json prints the',
  'same rows as JSON.',
]);

export async function inspectCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags('inspect', args, { json: { type: 'boolean' } }, ['dir']);
  const [dir] = positionals;
  const { tree } = await loadSessionDir('inspect', dir);
  const ordered = tree.ordered();
  if (values.json === true) {
    process.stdout.write(
      `${JSON.stringify(
        ordered.map(({ node }) => toJson(node)),
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
    formatMs(node.lastEventAt - node.createdAt),
  ]);
  const lines = table(['agent', 'label', 'depth', 'mode', 'stop', 'turns', 'tokens in/out', 'duration'], rows);
  process.stdout.write(`${dir}: ${ordered.length} sessions, ${roots} tree${roots === 1 ? '' : 's'}\n`);
  process.stdout.write(`${lines.join('\n')}\n`);
  for (const { node } of ordered) {
    for (const diagnostic of node.diagnostics) process.stdout.write(`  ${node.id}: ${diagnostic}\n`);
  }
  return 0;
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
