/**
 * `brood run --config <file.json> [--prompt <text>]`: a host-free way to run one real agent against an
 * OpenAI-compatible endpoint, with the built-in safe tools and delegation instances from the config.
 * Streams the agent's answer to stdout as it arrives (from `brood.events()`); with a TTY on stderr the
 * live delegation tree is drawn there. Config problems (including ones the library finds while
 * installing the config, e.g. a bad delegation instance) exit 2; an agent that does not complete exits 1.
 */
import { stat } from 'node:fs/promises';
import {
  anthropicCompatible,
  BroodError,
  createBrood,
  fileSessions,
  mcpTools,
  messageTools,
  openAICompatible,
  subagentTool,
  type Agent,
  type AnthropicCompatibleOptions,
  type Brood,
  type BroodOptions,
  type McpServer,
  type ModelProviderConfig,
  type OpenAICompatibleOptions,
  type SubagentToolConfig,
} from '../index.js';
import { builtinTools } from './builtin-tools.js';
import { commandHelp, oneLine, parseFlags, stringFlag, UsageError } from './cli-errors.js';
import { loadRunConfig, mcpArguments, type ProviderEntry, type RunConfig } from './run-config.js';
import { AnswerPrinter } from './answer-printer.js';
import { followTree } from './follow-tree.js';
import { loadDisplayWidth } from './text-width.js';
import { TreeState } from './tree-state.js';
import { LiveTreeView } from './tree-view.js';

export const RUN_USAGE = 'brood run --config <file.json> [--prompt <text>]';
export const RUN_HELP = commandHelp(RUN_USAGE, [
  'Runs one agent against the OpenAI-compatible providers of the config file and streams its answer',
  'to stdout. With a TTY on stderr, the live delegation tree is drawn there. The config names the',
  'providers (apiKeyEnv: the environment variable holding the key), the agent, the built-in tools',
  '(read_file, list_dir, http_get), delegation instances and an optional sessions directory.',
  'Ctrl-C cancels the turn. Exit codes: 0 completed, 1 the agent did not complete, 2 bad flags or config.',
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
  const { values } = parseFlags('run', args, { config: { type: 'string' }, prompt: { type: 'string' } }, []);
  const file = stringFlag(values, 'config');
  if (file === undefined) throw new UsageError('brood run: --config <file.json> is required (see brood --help)');
  const config = await loadRunConfig(file);
  const prompt = stringFlag(values, 'prompt') ?? config.prompt;
  if (prompt === undefined || prompt === '')
    throw new UsageError(`brood run: config ${file}: prompt: required (or pass --prompt)`);
  if (config.tools.some((t) => t !== 'http_get')) await checkRoot(config);
  const { brood, agent } = await setUp(config);
  const controller = new AbortController();
  // First Ctrl-C cancels the turn (the agent ends `aborted`); the default handler is back after that.
  process.once('SIGINT', () => controller.abort());
  const state = new TreeState();
  state.nodeFor(agent.id, undefined, 0, Date.now());
  state.setLabel(agent.id, prompt);
  const answer = new AnswerPrinter(agent.id, process.stdout);
  const following = followTree(brood, state, (event) => answer.onEvent(event));
  const tty = process.stderr.isTTY === true;
  const view = tty
    ? new LiveTreeView(state, process.stderr, true, Date.now(), await loadDisplayWidth(), false)
    : undefined;
  view?.start();
  try {
    const result = await agent.run(prompt, { signal: controller.signal });
    // The stream may still hold the last deltas; a bounded wait keeps a lost event from hanging the CLI.
    await Promise.race([answer.caughtUp, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    view?.stop();
    answer.finish(result.output);
    if (result.stopReason === 'completed') return 0;
    const diagnostic = result.diagnostic === undefined ? '' : `: ${oneLine(result.diagnostic)}`;
    process.stderr.write(`brood run: agent ended ${result.stopReason}${diagnostic}\n`);
    return 1;
  } finally {
    view?.stop();
    await brood.close();
    await following;
  }
}

async function checkRoot(config: RunConfig): Promise<void> {
  const info = await stat(config.root).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) {
    throw new UsageError(`brood run: config ${config.file}: root: ${config.root} is not a directory`);
  }
}

/** Builds the runtime and the agent; any library rejection of the config becomes a UsageError. */
async function setUp(config: RunConfig): Promise<{ brood: Brood; agent: Agent }> {
  const brood = await runtimeFromConfig(config);
  try {
    return { brood, agent: await agentFromConfig(brood, config) };
  } catch (error) {
    await brood.close().catch(() => undefined);
    throw error;
  }
}

/** The runtime a config describes (models, sessions, tools, delegation); also used by `brood acp`. */
export async function runtimeFromConfig(config: RunConfig): Promise<Brood> {
  let brood: Brood | undefined;
  try {
    brood = createBrood(broodOptions(config));
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
  const { file, models, agent, tools, root, delegation, sessions, prompt, mcpServers, ...runtime } = config;
  const options: BroodOptions = { ...runtime, models: models.map(providerConfig) };
  if (sessions !== undefined) options.sessions = fileSessions(sessions);
  return options;
}

function providerConfig(entry: ProviderEntry): ModelProviderConfig {
  if (entry.kind === 'anthropic') {
    const { kind, ...options } = entry;
    return anthropicCompatible(options as AnthropicCompatibleOptions);
  }
  const { kind, ...options } = entry;
  return openAICompatible(options as OpenAICompatibleOptions);
}
