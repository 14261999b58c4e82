/**
 * `brood run --config <file.json> [--prompt <text>]`: a host-free way to run one real agent against an
 * OpenAI- or Anthropic-compatible endpoint, with the built-in safe tools, delegation instances and MCP
 * servers from the config. Streams the agent's answer to stdout as it arrives (from `brood.events()`);
 * with a TTY on stderr the live delegation tree is drawn there (below the answer when both share the
 * terminal). Config problems (including ones the library finds while installing the config) exit 2;
 * an agent that does not complete exits 1; subagents that did not complete get a line each on stderr,
 * saying why.
 */
import { stat } from 'node:fs/promises';
import {
  type Agent,
  type AnthropicCompatibleOptions,
  aiSdkModels,
  anthropicCompatible,
  type Brood,
  BroodError,
  type BroodOptions,
  createBrood,
  fileSessions,
  type McpServer,
  type ModelProviderConfig,
  mcpTools,
  messageTools,
  type OpenAICompatibleOptions,
  openAICompatible,
  type SubagentToolConfig,
  subagentTool,
  type TurnResult,
} from '../index.js';
import { AnswerPrinter, SharedAnswer } from './answer-printer.js';
import { builtinTools } from './builtin-tools.js';
import { commandHelp, oneLine, parseFlags, stringFlag, UsageError } from './cli-errors.js';
import { followTree } from './follow-tree.js';
import { CliApprover, parseApproveFlag, terminalIo } from './run-approvals.js';
import { loadRunConfig, mcpArguments, type ProviderEntry, type RunConfig } from './run-config.js';
import { sameTerminal } from './terminal-region.js';
import { loadDisplayWidth, type Measure } from './text-width.js';
import { TreeState } from './tree-state.js';
import { LiveTreeView, terminalSize } from './tree-view.js';

export const RUN_USAGE = 'brood run --config <file.json> [--prompt <text>] [--approve <tools>]';
export const RUN_HELP = commandHelp(RUN_USAGE, [
  'Runs one agent against the providers of the config file and streams its answer to stdout. With a',
  'TTY on stderr, the live delegation tree is drawn there. The config names the providers (kind',
  "'openai', 'anthropic' or 'ai-sdk', every option of its factory; apiKeyEnv: the",
  'environment variable holding the key), the agent (createAgent options), the built-in tools',
  '(read_file, list_dir, http_get), delegation instances, MCP servers, createBrood options such as',
  'maxSteps, and an optional sessions directory. Subagents that did not complete get a line each on',
  "stderr saying why. Ctrl-C cancels the turn. Calls the config's approvals.ask names wait for",
  'approval: a y/N prompt on a terminal; --approve <tool,tool> allows those tools without asking, and',
  'without a terminal any other call is refused. Exit codes: 0 completed, 1 the agent did not',
  'complete, 2 bad flags or config.',
]);

// Library rejections that mean "the configuration is wrong", as opposed to a failure while running.
const CONFIG_CODES = new Set([
  'INVALID_CONFIG',
  'UNKNOWN_MODEL',
  'INVALID_EFFORT',
  'INVALID_TOOL_FILTER',
  'TEMPLATE_ERROR',
  'NO_PROVIDER',
  'DUPLICATE_TOOL',
  'RESERVED_TOOL_NAME',
  'UNSUPPORTED_CAPABILITY',
]);

export async function runCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(
    'run',
    args,
    { config: { type: 'string' }, prompt: { type: 'string' }, approve: { type: 'string' } },
    [],
  );
  const file = stringFlag(values, 'config');
  if (file === undefined) throw new UsageError('brood run: --config <file.json> is required (see brood --help)');
  const config = await loadRunConfig(file);
  const prompt = stringFlag(values, 'prompt') ?? config.prompt;
  if (prompt === undefined || prompt === '')
    throw new UsageError(`brood run: config ${file}: prompt: required (or pass --prompt)`);
  if (config.tools.some((t) => t !== 'http_get')) await checkRoot(config);
  let view: LiveTreeView | undefined;
  // Runtime diagnostics go above the live tree, never through it.
  const notice = (line: string): void => {
    if (view === undefined) process.stderr.write(line);
    else view.printAbove(process.stderr, line);
  };
  const { brood, agent } = await setUp(config, (message) => notice(`brood run: ${oneLine(message)}\n`));
  const controller = new AbortController();
  // First Ctrl-C cancels the turn (the agent ends `aborted`); the default handler is back after that.
  process.once('SIGINT', () => controller.abort());
  const state = new TreeState();
  state.nodeFor(agent.id, undefined, 0, Date.now());
  state.setLabel(agent.id, prompt);
  const measure = await loadDisplayWidth();
  const { answer, view: live, shared } = liveOutput(state, agent.id, measure);
  view = live;
  const prompts = {
    write: (text: string) => process.stderr.write(text),
    columns: () => terminalSize(process.stderr).columns,
    measure,
    hold: () => live?.hold(),
    release: () => live?.release(),
  };
  const questions = terminalIo(prompts);
  const approver = new CliApprover(brood, parseApproveFlag(stringFlag(values, 'approve')), questions);
  const following = followTree(brood, state, (event) => {
    answer.onEvent(event);
    approver.onEvent(event);
  });
  view?.start();
  try {
    const result = await agent.run(prompt, { signal: controller.signal });
    // The stream may still hold the last deltas; a bounded wait keeps a lost event from hanging the CLI.
    await Promise.race([answer.caughtUp, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    answer.finish(result.output);
    questions.close(); // a question still open (the turn was cancelled) must not keep stdin waiting
    view?.stop();
    return reportOutcome(result, state, agent.id);
  } finally {
    questions.close();
    shared?.flush();
    view?.stop();
    await brood.close();
    await following;
  }
}

/**
 * The answer goes to stdout, the live tree (with a TTY on stderr) to stderr. When both are one
 * terminal, the answer's whole lines scroll above the tree and the open line is previewed in it.
 */
function liveOutput(
  state: TreeState,
  agentId: string,
  measure: Measure,
): { answer: AnswerPrinter; view: LiveTreeView | undefined; shared: SharedAnswer | undefined } {
  const tree = process.stderr.isTTY === true;
  const sharing = tree && process.stdout.isTTY === true && sameTerminal(1, 2);
  const shared = sharing ? new SharedAnswer(process.stdout, measure) : undefined;
  const answer = new AnswerPrinter(agentId, shared ?? process.stdout);
  const view = tree
    ? new LiveTreeView(state, process.stderr, true, Date.now(), measure, false, shared?.preview)
    : undefined;
  if (view !== undefined) shared?.attach(view);
  return { answer, view, shared };
}

/** Exit code 0 only when the lead completed; failed subagents get a line each whatever the lead did. */
function reportOutcome(result: TurnResult, state: TreeState, leadId: string): number {
  if (result.stopReason !== 'completed') {
    const diagnostic = result.diagnostic === undefined ? '' : `: ${oneLine(result.diagnostic)}`;
    process.stderr.write(`brood run: agent ended ${result.stopReason}${diagnostic}\n`);
  }
  for (const line of childFailures(state, leadId)) process.stderr.write(`${line}\n`);
  return result.stopReason === 'completed' ? 0 : 1;
}

const MAX_FAILURE_LINES = 20;
const MAX_DIAGNOSTIC = 200;

/**
 * The subagents that had a turn end other than `completed`: a count, then one line each saying why
 * (the stop reason and diagnostic of its latest such turn); none when every subagent completed.
 */
export function childFailures(state: TreeState, leadId: string): string[] {
  const children = state.ordered().filter(({ node }) => node.id !== leadId);
  const failed = children.flatMap(({ node }) =>
    node.lastFailure === undefined ? [] : [{ node, ...node.lastFailure }],
  );
  if (failed.length === 0) return [];
  const lines = failed.slice(0, MAX_FAILURE_LINES).map(({ node, reason, diagnostic }) => {
    const label = node.label === '' ? '' : ` "${clipText(oneLine(node.label), 40)}"`;
    const why = diagnostic === undefined ? '' : `: ${clipText(oneLine(diagnostic), MAX_DIAGNOSTIC)}`;
    return `  ${node.id}${label} ${reason}${why}`;
  });
  if (failed.length > lines.length) lines.push(`  … ${failed.length - lines.length} more`);
  return [`brood run: ${failed.length} of ${children.length} subagents did not complete:`, ...lines];
}

function clipText(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}

export async function checkRoot(config: RunConfig): Promise<void> {
  const info = await stat(config.root).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) {
    throw new UsageError(`brood run: config ${config.file}: root: ${config.root} is not a directory`);
  }
}

/** Builds the runtime and the agent; any library rejection of the config becomes a UsageError. */
async function setUp(
  config: RunConfig,
  onDiagnostic: (message: string) => void,
): Promise<{ brood: Brood; agent: Agent }> {
  const brood = await runtimeFromConfig(config, onDiagnostic);
  try {
    return { brood, agent: await agentFromConfig(brood, config) };
  } catch (error) {
    await brood.close().catch(() => undefined);
    throw error;
  }
}

/** The runtime a config describes (models, sessions, tools, delegation); also used by `brood acp`. */
export async function runtimeFromConfig(config: RunConfig, onDiagnostic?: (message: string) => void): Promise<Brood> {
  let brood: Brood | undefined;
  try {
    brood = createBrood({ ...broodOptions(config), ...(onDiagnostic === undefined ? {} : { onDiagnostic }) });
    for (const tool of builtinTools(config.tools, config.root)) brood.tools.register(tool);
    for (const [name, entry] of Object.entries(config.mcpServers)) {
      const { server, options } = mcpArguments(name, entry);
      await brood.use(mcpTools(server as unknown as McpServer, options)).catch((error: unknown) => {
        throw keyed(`mcpServers.${name}`, error);
      });
    }
    let continuable = false;
    for (const [index, entry] of config.delegation.entries()) {
      try {
        brood.use(subagentTool(entry as unknown as SubagentToolConfig));
      } catch (error) {
        throw keyed(`delegation[${index}]`, error);
      }
      continuable ||= entry.backgroundMode === 'continuable';
    }
    // A continuable child is only useful if the agent can message it again.
    if (continuable) brood.use(messageTools());
    return brood;
  } catch (error) {
    await brood?.close().catch(() => undefined);
    throw asUsageError(config, error);
  }
}

/** The config's top-level agent (one per `brood run`, one per ACP session in `brood acp`). */
export async function agentFromConfig(brood: Brood, config: RunConfig): Promise<Agent> {
  return brood.createAgent(config.agent).catch((error: unknown) => {
    throw asUsageError(config, keyed('agent', error));
  });
}

function asUsageError(config: RunConfig, error: unknown): unknown {
  if (error instanceof BroodError && CONFIG_CODES.has(error.code)) {
    return new UsageError(`brood run: config ${config.file}: ${oneLine(error.message)} [${error.code}]`);
  }
  return error;
}

/** Prefixes a library config error with the config key it came from. */
function keyed(key: string, error: unknown): unknown {
  if (error instanceof BroodError) error.message = `${key}: ${error.message}`;
  return error;
}

/** createBrood's options: the config's runtime options as they are, plus its providers and sessions. */
function broodOptions(config: RunConfig): BroodOptions {
  const { file, models, agent, tools, root, delegation, sessions, prompt, mcpServers, approvals, ...runtime } = config;
  const options: BroodOptions = { ...runtime, models: models.map(providerConfig) };
  if (approvals !== undefined) options.approvals = approvalOptions(approvals);
  if (sessions !== undefined) options.sessions = fileSessions(sessions);
  return options;
}

/** The config's `approvals.ask` (tool names, `*` for all) as the runtime's policy. */
function approvalOptions(approvals: NonNullable<RunConfig['approvals']>): NonNullable<BroodOptions['approvals']> {
  const { ask, ...rest } = approvals;
  if (ask === undefined) return rest;
  const names = new Set(ask);
  return { ...rest, policy: (call) => (names.has('*') || names.has(call.tool) ? 'ask' : 'allow') };
}

function providerConfig(entry: ProviderEntry): ModelProviderConfig {
  if (entry.kind === 'ai-sdk') {
    const { kind, ...options } = entry;
    return aiSdkModels(options);
  }
  if (entry.kind === 'anthropic') {
    const { kind, ...options } = entry;
    return anthropicCompatible(options as AnthropicCompatibleOptions);
  }
  const { kind, ...options } = entry;
  return openAICompatible(options as OpenAICompatibleOptions);
}
