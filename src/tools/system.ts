/**
 * The per-runtime tool system (SPEC §4): one global layer plus one layer per agent scope, all
 * resolved through resolver.ts. State lives in the closure of createToolSystem, never in module
 * globals, so two runtimes in one process cannot see each other's tools.
 */
import { BroodError } from '../errors.js';
import type { Agent, CodeMode, ToolCallRequest, ToolFilter, ToolRegistry, ToolResult, ToolSchema } from '../types.js';
import { type Disposer, makeDisposer } from '../util/disposer.js';
import { compareCodeUnits, RUN_CODE_SCHEMA, RUN_CODE_TOOL_NAME, renderSdk } from './code-mode-sdk.js';
import {
  type ConcurrencyClass,
  classifyResolved,
  type ExecutionScope,
  errorResult,
  executeResolved,
} from './execute.js';
import type { ToolHooks } from './hooks.js';
import { callContained, Listeners, ToolLayer } from './layer.js';
import { type ResolvedTool, resolveAll, resolveOne, type ScopeInputs, toView } from './resolver.js';
import { createRestriction, type Restriction } from './restriction.js';

export interface ToolSystem {
  /** brood.tools: the global layer. */
  readonly global: ToolRegistry;
  /** One agent layer; `agent` is read lazily because the Agent object is built after its scope. */
  createScope(agent: () => Agent | undefined): AgentToolScope;
  /** Registered global tool names, sorted: the restrictable set filters are validated against. */
  knownGlobalNames(): string[];
}

export interface ModelToolCall {
  name: string;
  arguments: unknown;
  callId: string;
  signal?: AbortSignal;
  context?: unknown;
}

export interface AgentToolScope {
  /** agent.tools: register = agent-local; restrict allowed; execute runs as the agent. */
  readonly registry: ToolRegistry;
  /** The live resolution for this scope, sorted by name. */
  resolve(): ResolvedTool[];
  classify(name: string, args: unknown): ConcurrencyClass;
  /** The tool a call by this name reaches in this scope now (undefined: not visible, or disposed). */
  find(name: string): ResolvedTool | undefined;
  /** A call the model made directly; run_code is never executed here. */
  executeFromModel(call: ModelToolCall, codeMode: CodeMode): Promise<ToolResult>;
  installFilter(filter: ToolFilter, opts?: { validate?: boolean }): Disposer;
  /** The filters currently installed (copies), in installation order, e.g. for session records. */
  filters(): ToolFilter[];
  dispose(): void;
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

  const createScope = (agent: () => Agent | undefined): AgentToolScope => {
    const scope = createAgentScope(
      // Agent-layer changes reach only that scope's own listeners (the agent bumps its own version);
      // options.onChange is for global changes, which may alter every view.
      {
        globals,
        knownGlobalNames,
        ...faultSink(options.reportFault),
        ...(options.hooks ? { hooks: options.hooks } : {}),
      },
      agent,
      () => scopes.delete(scope),
    );
    scopes.add(scope);
    return scope;
  };

  return { global, createScope, knownGlobalNames };
}

interface ScopeDeps {
  globals: ToolLayer;
  knownGlobalNames(): string[];
  reportFault?: (message: string) => void;
  hooks?: ToolHooks;
}

function faultSink(reportFault: ((message: string) => void) | undefined): { reportFault?: (message: string) => void } {
  return reportFault === undefined ? {} : { reportFault };
}

function createAgentScope(
  deps: ScopeDeps,
  agent: () => Agent | undefined,
  detach: () => void,
): AgentToolScope & { onGlobalChange(): void } {
  const locals = new ToolLayer();
  const restrictions = new Set<Restriction>();
  const listeners = new Listeners();
  let disposed = false;

  const changed = () => listeners.emit();
  const inputs = (): ScopeInputs => ({
    globals: deps.globals.tools,
    locals: locals.tools,
    restrictions,
    agent: agent(),
  });
  const resolve = () => (disposed ? [] : resolveAll(inputs()));
  const lookup = (name: string) => (disposed ? undefined : resolveOne(inputs(), name));
  const execution: ExecutionScope = {
    lookup,
    agent,
    ...faultSink(deps.reportFault),
    ...(deps.hooks ? { hooks: deps.hooks } : {}),
  };

  const assertLive = () => {
    if (disposed) throw new BroodError('DISPOSED', 'This agent tool scope has been disposed');
  };

  const installFilter = (filter: ToolFilter, opts: { validate?: boolean } = {}): Disposer => {
    assertLive();
    const restriction = createRestriction(filter, deps.knownGlobalNames(), opts.validate ?? true);
    restrictions.add(restriction);
    changed();
    return makeDisposer(() => {
      if (restrictions.delete(restriction)) changed();
    });
  };

  const execute = (call: ToolCallRequest): Promise<ToolResult> =>
    disposed
      ? Promise.resolve(errorResult('DISPOSED', 'This agent tool scope has been disposed'))
      : executeResolved(execution, call);

  const registry: ToolRegistry = {
    register: (tool) => {
      assertLive();
      const disposer = locals.add(tool, 'agent', changed);
      changed();
      return disposer;
    },
    restrict: (filter) => installFilter(filter, { validate: true }),
    view: () => toView(resolve()),
    execute,
    sdk: () => renderSdk(resolve().map((tool) => tool.schema)),
    on: (event, fn) => (disposed ? makeDisposer(() => {}) : listeners.add(checkEvent(event, fn))),
  };

  return {
    registry,
    resolve,
    classify: (name, args) => classifyResolved(lookup(name), args),
    find: lookup,
    executeFromModel: (call, codeMode) => {
      const refusal = modelCallRefusal(call.name, codeMode);
      return refusal === undefined ? execute(call) : Promise.resolve(refusal);
    },
    installFilter,
    filters: () => [...restrictions].map((r) => copyFilter(r.filter)),
    dispose: () => {
      if (disposed) return;
      disposed = true;
      locals.clear();
      restrictions.clear();
      listeners.clear();
      detach();
    },
    onGlobalChange: () => {
      if (!disposed) listeners.emit();
    },
  };
}

/** Rule 8: the mode changes what is presented, never what is visible. */
export function presentedSchemas(resolved: readonly ResolvedTool[], codeMode: CodeMode): ToolSchema[] {
  if (codeMode === 'code') return [RUN_CODE_SCHEMA];
  const visible = resolved.map((tool) => tool.schema);
  return codeMode === 'both' ? [...visible, RUN_CODE_SCHEMA] : visible;
}

/**
 * run_code is executed by the agent's worker, so reaching the resolver with it is a protocol error;
 * under 'code' the model may only reach other tools through run_code.
 */
function modelCallRefusal(name: string, codeMode: CodeMode): ToolResult | undefined {
  if (name === RUN_CODE_TOOL_NAME) {
    return errorResult('UNKNOWN_TOOL', `Unknown tool "${RUN_CODE_TOOL_NAME}": it is not executed by the tool resolver`);
  }
  if (codeMode !== 'code') return undefined;
  return errorResult(
    'UNKNOWN_TOOL',
    `Unknown tool "${name}": in code mode tools are not called directly; call run_code and use tools.${name}(args) inside it`,
  );
}

function copyFilter(filter: ToolFilter): ToolFilter {
  const copy: ToolFilter = {};
  if (filter.allow !== undefined) copy.allow = [...filter.allow];
  if (filter.deny !== undefined) copy.deny = [...filter.deny];
  return copy;
}

function checkEvent(event: string, fn: () => void): () => void {
  if (event !== 'change')
    throw new BroodError('INVALID_CONFIG', `Unknown tool registry event "${event}" (only "change")`);
  return fn;
}
