/**
 * The per-runtime tool system (SPEC §4): one global layer plus one layer per agent scope, all
 * resolved through resolver.ts. State lives in the closure of createToolSystem, never in module
 * globals, so two runtimes in one process cannot see each other's tools.
 */
import { BroodError } from '../errors.js';
import type { Agent, CodeMode, ToolRegistry, ToolSchema } from '../types.js';
import { AgentScope, type AgentToolScope, checkEvent } from './agent-scope.js';
import { compareCodeUnits, RUN_CODE_SCHEMA, renderSdk } from './code-mode-sdk.js';
import { type ExecutionScope, executeResolved } from './execute.js';
import type { ToolHooks } from './hooks.js';
import { callContained, Listeners, ToolLayer } from './layer.js';
import { type ResolvedTool, resolveAll, resolveOne, type ScopeInputs, toView } from './resolver.js';

export type { AgentToolScope, ModelToolCall } from './agent-scope.js';

export interface ToolSystem {
  /** brood.tools: the global layer. */
  readonly global: ToolRegistry;
  /**
   * One agent layer; `agent` is read lazily because the Agent object is built after its scope.
   * `onChange` hears every change that may alter the scope's view (its own layer, its filters, the
   * global layer), before the scope's `change` listeners.
   */
  createScope(agent: () => Agent | undefined, onChange?: () => void): AgentToolScope;
  /** Registered global tool names, sorted: the restrictable set filters are validated against. */
  knownGlobalNames(): string[];
}

/** `onChange` fires on global-layer changes; agent-layer changes are seen through `scope.registry.on('change')`. */
/** `reportFault` hears the stack of every tool body that throws (createBrood's onDiagnostic). */
/** `hooks` see every call an agent scope runs (createBrood's hooks; the global registry runs as no agent). */
export function createToolSystem(
  options: { onChange?: () => void; reportFault?: (message: string) => void; hooks?: ToolHooks } = {},
): ToolSystem {
  const globals = new ToolLayer();
  const globalListeners = new Listeners();
  const scopes = new Set<{ onGlobalChange(): void }>();

  const knownGlobalNames = () => [...globals.tools.keys()].sort(compareCodeUnits);

  /** A global change may alter every view, so every scope hears about it. */
  const globalChanged = () => {
    globalListeners.emit();
    for (const scope of [...scopes]) scope.onGlobalChange();
    callContained(options.onChange);
  };

  const globalInputs = (): ScopeInputs => ({
    globals: globals.tools,
    locals: undefined,
    restrictions: [],
    agent: undefined,
  });
  const globalExecution: ExecutionScope = {
    lookup: (name) => resolveOne(globalInputs(), name),
    agent: () => undefined,
    ...faultSink(options.reportFault),
  };

  const global: ToolRegistry = {
    register: (tool) => {
      const disposer = globals.add(tool, 'global', globalChanged);
      globalChanged();
      return disposer;
    },
    restrict: () => {
      throw new BroodError(
        'SCOPE_REQUIRED',
        'restrict() applies to an agent scope (agent.tools), not the global registry',
      );
    },
    view: () => toView(resolveAll(globalInputs())),
    execute: (call) => executeResolved(globalExecution, call),
    sdk: () => renderSdk(resolveAll(globalInputs()).map((tool) => tool.schema)),
    on: (event, fn) => globalListeners.add(checkEvent(event, fn)),
  };

  // Agent-layer changes reach only that scope's own listeners (the agent bumps its own version);
  // options.onChange is for global changes, which may alter every view. One deps object for every scope.
  const scopeDeps = {
    globals,
    knownGlobalNames,
    ...faultSink(options.reportFault),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  };
  const createScope = (agent: () => Agent | undefined, onChange?: () => void): AgentToolScope => {
    const scope: AgentScope = new AgentScope(scopeDeps, agent, () => scopes.delete(scope), onChange);
    scopes.add(scope);
    return scope;
  };

  return { global, createScope, knownGlobalNames };
}

function faultSink(reportFault: ((message: string) => void) | undefined): { reportFault?: (message: string) => void } {
  return reportFault === undefined ? {} : { reportFault };
}

/** Rule 8: the mode changes what is presented, never what is visible. */
export function presentedSchemas(resolved: readonly ResolvedTool[], codeMode: CodeMode): ToolSchema[] {
  if (codeMode === 'code') return [RUN_CODE_SCHEMA];
  const visible = resolved.map((tool) => tool.schema);
  return codeMode === 'both' ? [...visible, RUN_CODE_SCHEMA] : visible;
}
