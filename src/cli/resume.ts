/**
 * `brood resume --config <file.json> [--sessions <dir>]`: finishes what a crashed or killed `brood run`
 * left in its sessions directory. Builds the runtime `brood run` builds from the same config, on
 * fileSessions of the directory, and calls `brood.recover()`: interrupted turns continue from their
 * logs (no answered model request is sent again, no logged call runs twice). The live tree is drawn on
 * stderr when it is a TTY, as `brood run` draws it; each recovered root's answer goes to stdout.
 */
import type { RecoveredTurn, TurnResult } from '../index.js';
import { commandHelp, oneLine, parseFlags, stringFlag, UsageError } from './cli-errors.js';
import { followTree } from './follow-tree.js';
import { checkRoot, childFailures, runtimeFromConfig } from './run.js';
import { CliApprover, parseApproveFlag, terminalIo } from './run-approvals.js';
import { loadRunConfig } from './run-config.js';
import { loadDisplayWidth } from './text-width.js';
import { TreeState } from './tree-state.js';
import { LiveTreeView, terminalSize } from './tree-view.js';

export const RESUME_USAGE = 'brood resume --config <file.json> [--sessions <dir>] [--approve <tools>]';
export const RESUME_HELP = commandHelp(RESUME_USAGE, [
  'Finishes the turns a crash or a kill interrupted: builds the runtime from the same config file as',
  "brood run, on the sessions directory (--sessions, else the config's sessions), and resumes every",
  'interrupted top-level agent with its subagents. A model request whose answer is logged is not sent',
  'again; a logged tool call is not run again (an interrupted call of a tool not marked idempotent',
  "gets a TOOL_OUTCOME_UNKNOWN result). Prints each resumed agent's answer to stdout; with a TTY on",
  'stderr, the live delegation tree is drawn there. --approve as for brood run. Exit codes: 0 every',
  'resumed turn completed (or nothing to recover), 1 one did not, 2 bad flags or config.',
]);

export async function resumeCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(
    'resume',
    args,
    { config: { type: 'string' }, sessions: { type: 'string' }, approve: { type: 'string' } },
    [],
  );
  const file = stringFlag(values, 'config');
  if (file === undefined) throw new UsageError('brood resume: --config <file.json> is required (see brood --help)');
  const config = await loadRunConfig(file);
  const sessions = stringFlag(values, 'sessions') ?? config.sessions;
  if (sessions === undefined)
    throw new UsageError(
      `brood resume: config ${file} names no sessions directory (set sessions, or pass --sessions <dir>)`,
    );
  if (config.tools.some((t) => t !== 'http_get')) await checkRoot(config);
  let view: LiveTreeView | undefined;
  const notice = (line: string): void => {
    if (view === undefined) process.stderr.write(line);
    else view.printAbove(process.stderr, line);
  };
  const brood = await runtimeFromConfig({ ...config, sessions }, (message) =>
    notice(`brood resume: ${oneLine(message)}\n`),
  );
  const state = new TreeState();
  const measure = await loadDisplayWidth();
  view = process.stderr.isTTY === true ? new LiveTreeView(state, process.stderr, true, Date.now(), measure) : undefined;
  const questions = terminalIo({
    write: (text: string) => process.stderr.write(text),
    columns: () => terminalSize(process.stderr).columns,
    measure,
    hold: () => view?.hold(),
    release: () => view?.release(),
  });
  const approver = new CliApprover(brood, parseApproveFlag(stringFlag(values, 'approve')), questions);
  const following = followTree(brood, state, (event) => approver.onEvent(event));
  try {
    const recovered = await brood.recover();
    if (recovered.length === 0) {
      process.stderr.write(`brood resume: nothing to recover in ${sessions}\n`);
      return 0;
    }
    for (const { agent } of recovered) state.nodeFor(agent.id, undefined, 0, Date.now());
    view?.start();
    const outcomes = await settleAll(recovered);
    view?.stop();
    return report(outcomes, state);
  } finally {
    questions.close();
    view?.stop();
    await brood.close();
    await following;
  }
}

interface Outcome {
  agentId: string;
  result: TurnResult | undefined;
  error?: unknown;
}

/** Every recovered root's result; a root whose turn rejects is an outcome too, not an abort of the rest. */
async function settleAll(recovered: RecoveredTurn[]): Promise<Outcome[]> {
  const settled = await Promise.allSettled(recovered.map((r) => r.result));
  return settled.map((outcome, index) => {
    const agentId = (recovered[index] as RecoveredTurn).agent.id;
    return outcome.status === 'fulfilled'
      ? { agentId, result: outcome.value }
      : { agentId, result: undefined, error: outcome.reason };
  });
}

/** Each root's answer on stdout (headed by its id when there are several); exit 0 only if all completed. */
function report(outcomes: Outcome[], state: TreeState): number {
  let allCompleted = true;
  for (const { agentId, result, error } of outcomes) {
    if (outcomes.length > 1) process.stdout.write(`── ${agentId}\n`);
    if (result !== undefined && result.output !== '') process.stdout.write(`${result.output}\n`);
    if (result?.stopReason === 'completed') continue;
    allCompleted = false;
    const why =
      result === undefined
        ? `failed: ${oneLine(error instanceof Error ? error.message : String(error))}`
        : `ended ${result.stopReason}${result.diagnostic === undefined ? '' : `: ${oneLine(result.diagnostic)}`}`;
    process.stderr.write(`brood resume: agent ${agentId} ${why}\n`);
  }
  // Like brood run, subagents that did not complete get a line each (the tree has one root to exclude).
  const [only] = outcomes;
  if (outcomes.length === 1 && only !== undefined)
    for (const line of childFailures(state, only.agentId)) process.stderr.write(`${line}\n`);
  return allCompleted ? 0 : 1;
}
