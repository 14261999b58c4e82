/**
 * subagentTool (SPEC §11): one model-facing delegation tool bound to one subagent provider.
 *
 * `use()` validates and reserves everything that can conflict (tool name, discovery ownership,
 * guidance section, job tools) up front, so a conflict fails the `use()` rather than a later provider
 * registration. The tool itself is mounted only while its provider is registered, synchronously
 * inside `subagents.register()` and its disposer, with wording taken from that provider object.
 */
import type { Brood, BroodPlugin } from '../brood.js';
import { BroodError } from '../errors.js';
import { pluginAccess } from '../runtime/plugin-access.js';
import type { SubagentProvider } from '../subagents/types.js';
import { deepFreeze, defineTool } from '../tools/define-tool.js';
import { resumesInterruptedCalls } from '../tools/interrupted.js';
import type { Agent, ToolDefinition, ToolPresentation } from '../types.js';
import { type Disposer, DisposerStack, makeDisposer } from '../util/disposer.js';
import { parseSubagentToolConfig, type ResolvedSubagentToolConfig, type SubagentToolConfig } from './config.js';
import { installJobTools } from './job-tools.js';
import { LIST_MODELS_TOOL, listModelsTool } from './list-models-tool.js';
import { runDelegation } from './routes.js';
import { modelSelectionEnabledFor } from './shared.js';
import { continuableSectionText, sectionName, toolWording } from './wording.js';

/** Orders the guidance after deployment sections (persona is 0, default 100). */
export const SECTION_ORDER = 200;

/** Names owned by the shared delegation tools; an instance may not take them. */
const SHARED_TOOL_NAMES: ReadonlySet<string> = new Set([
  'job_output',
  'job_kill',
  'job_list',
  'send_message',
  LIST_MODELS_TOOL,
]);

export function subagentTool(config: SubagentToolConfig): BroodPlugin {
  return { name: 'subagentTool', install: (brood) => installSubagentTool(brood, config) };
}

function installSubagentTool(brood: Brood, raw: SubagentToolConfig): Disposer {
  const config = parseSubagentToolConfig(raw);
  const stack = new DisposerStack();
  try {
    reserveToolName(brood, config, stack);
    if (selectionConfigured(config)) reserveDiscovery(brood, config, stack);
    if (isContinuable(config)) {
      stack.add(
        brood.prompt.register({
          name: sectionName(config.toolName),
          tool: config.toolName,
          order: SECTION_ORDER,
          text: continuableSectionText(config.toolName),
        }),
      );
    }
    if (config.enableRunInBackground && config.backgroundMode === 'one-shot') stack.add(installJobTools(brood));
    const mount = new Mount(brood, config);
    stack.add(pluginAccess(brood).addMountHook({ added: (p) => mount.added(p), removed: (p) => mount.removed(p) }));
    stack.add(() => mount.unmount());
  } catch (error) {
    stack.disposeAll();
    throw error;
  }
  return makeDisposer(() => stack.disposeAll());
}

function selectionConfigured(config: ResolvedSubagentToolConfig): boolean {
  return config.enableModelSelection || config.modelSelectionSettings;
}

function isContinuable(config: ResolvedSubagentToolConfig): boolean {
  return config.enableRunInBackground && config.backgroundMode === 'continuable';
}

/** Reserved at use() even while the provider is absent, so duplicates never wait for a mount. */
function reserveToolName(brood: Brood, config: ResolvedSubagentToolConfig, stack: DisposerStack): void {
  const name = config.toolName;
  const host = pluginAccess(brood);
  const key = `tool:${name}`;
  if (SHARED_TOOL_NAMES.has(name)) throw invalidConfig(`toolName '${name}' is reserved for a shared delegation tool`);
  if (host.reservationHolder(key) !== undefined)
    throw invalidConfig(`toolName '${name}' is already used by another loaded subagentTool instance`);
  if (host.globalToolNames().includes(name)) throw invalidConfig(`toolName '${name}' is already a registered tool`);
  stack.add(host.reserve(key, config.provider));
}

/** list_subagent_models has a global name, so exactly one instance per runtime may own it. */
function reserveDiscovery(brood: Brood, config: ResolvedSubagentToolConfig, stack: DisposerStack): void {
  const host = pluginAccess(brood);
  const owner = host.reservationHolder(LIST_MODELS_TOOL);
  if (owner !== undefined) {
    const key = config.enableModelSelection ? 'enableModelSelection' : 'modelSelectionSettings';
    throw invalidConfig(
      `${key}: ${LIST_MODELS_TOOL} is already owned by the '${owner}' instance; at most one instance per runtime may enable model selection`,
    );
  }
  stack.add(host.reserve(LIST_MODELS_TOOL, config.toolName));
}

/** The tool's presence follows its provider: mounted while registered, with that provider's wording. */
class Mount {
  private current: { provider: SubagentProvider; dispose: () => void } | undefined;

  constructor(
    private readonly brood: Brood,
    private readonly config: ResolvedSubagentToolConfig,
  ) {}

  added(provider: SubagentProvider): void {
    if (provider.name !== this.config.provider) return;
    checkCapabilities(this.config, provider);
    this.unmount();
    const stack = new DisposerStack();
    try {
      stack.add(this.register(delegationTool(this.brood, this.config, provider, (agent) => this.selectionFor(agent))));
      if (selectionConfigured(this.config))
        stack.add(this.register(listModelsTool(this.brood.models, (agent) => this.selectionFor(agent))));
    } catch (error) {
      stack.disposeAll();
      throw error;
    }
    this.current = { provider, dispose: () => stack.disposeAll() };
  }

  removed(provider: SubagentProvider): void {
    if (this.current?.provider === provider) this.unmount();
  }

  unmount(): void {
    const current = this.current;
    this.current = undefined;
    current?.dispose();
  }

  selectionFor(agent: Agent | undefined): boolean {
    return (
      this.config.enableModelSelection ||
      (this.config.modelSelectionSettings && modelSelectionEnabledFor(this.brood, agent))
    );
  }

  /** A name taken after use() (a host tool registered meanwhile) is a config conflict, not a tool bug. */
  private register(tool: ToolDefinition): Disposer {
    try {
      return this.brood.tools.register(tool);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'DUPLICATE_TOOL') throw error;
      throw invalidConfig(`toolName '${tool.name}' is already a registered tool`, error);
    }
  }
}

/** §11.1: each configured control needs the provider capability that carries it. */
export function checkCapabilities(config: ResolvedSubagentToolConfig, provider: SubagentProvider): void {
  const caps = provider.capabilities;
  const need = (ok: boolean, key: string, capability: string) => {
    if (!ok) {
      throw invalidConfig(
        `${key} needs the '${capability}' capability, which subagent provider '${provider.name}' does not advertise (tool '${config.toolName}')`,
      );
    }
  };
  if (config.maxDepth === 'provider-managed') {
    if (caps.depthLimit) {
      throw invalidConfig(
        `maxDepth 'provider-managed' is only for providers without the 'depthLimit' capability; provider '${provider.name}' has it, so use a number`,
      );
    }
  } else {
    need(caps.depthLimit, 'maxDepth', 'depthLimit');
  }
  if (config.persona !== undefined) need(caps.persona, 'persona', 'persona');
  if (config.toolFilter !== undefined) need(caps.toolFilter, 'toolFilter', 'toolFilter');
  if (config.agentOptions !== undefined) need(caps.agentOptions, 'agentOptions', 'agentOptions');
  if (config.maxSteps !== undefined) need(caps.maxSteps === true, 'maxSteps', 'maxSteps');
  if (config.enableModelSelection) need(caps.agentOptions, 'enableModelSelection', 'agentOptions');
  if (config.modelSelectionSettings) need(caps.agentOptions, 'modelSelectionSettings', 'agentOptions');
  if (config.backgroundMode === 'continuable') {
    need(typeof provider.prepareContinuable === 'function', "backgroundMode 'continuable'", 'prepareContinuable');
  }
}

/** Wording is computed once per mount, so every request sees the same bytes (§11.10). */
function delegationTool(
  brood: Brood,
  config: ResolvedSubagentToolConfig,
  provider: SubagentProvider,
  selectionFor: (agent: Agent | undefined) => boolean,
): ToolDefinition {
  const facts = { inheritsParentContext: provider.inheritsParentContext === true };
  const base = toolWording(config, facts, config.enableModelSelection);
  // Settings-controlled instances present the selection fields per agent, as the same registered tool.
  const selected: ToolPresentation | undefined = config.modelSelectionSettings
    ? deepFreeze(toolWording(config, facts, true))
    : undefined;
  // An interrupted call finds the child it started (src/delegation/resume.ts) instead of TOOL_OUTCOME_UNKNOWN.
  return resumesInterruptedCalls(
    defineTool({
      name: config.toolName,
      description: base.description,
      parameters: base.parameters,
      concurrencySafe: true,
      ...(selected === undefined
        ? {}
        : { forAgent: (agent: Agent | undefined): ToolPresentation => (selectionFor(agent) ? selected : {}) }),
      execute: (args, ctx) => runDelegation({ brood, config, selectionFor }, args, ctx),
    }),
  );
}

function invalidConfig(message: string, cause?: unknown): BroodError {
  return new BroodError('INVALID_CONFIG', message, cause === undefined ? undefined : { cause });
}
