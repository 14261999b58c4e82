/**
 * One agent's tool scope (SPEC §4): its own layer and filters over the runtime's global layer. Its
 * methods are the class's, so an agent's scope is a few objects rather than a closure per method: a
 * wide fan-out makes one per child. What an agent never uses (its own tools, filters) is made when
 * first used.
 */
import { BroodError } from '../errors.js';
import type { Agent, CodeMode, ToolCallRequest, ToolFilter, ToolRegistry, ToolResult } from '../types.js';
import { type Disposer, makeDisposer } from '../util/disposer.js';
import type { LazyAbortController } from '../util/lazy-abort.js';
import { RUN_CODE_TOOL_NAME, renderSdk } from './code-mode-sdk.js';
import {
  type ConcurrencyClass,
  classifyResolved,
  type ExecutionScope,
  errorResult,
  executeResolved,
  type ScopedCall,
} from './execute.js';
import type { ToolHooks } from './hooks.js';
import { callContained, Listeners, ToolLayer } from './layer.js';
import { type ResolvedTool, resolveAll, resolveOne, type ScopeInputs, toView } from './resolver.js';
import { createRestriction, type Restriction } from './restriction.js';

export interface ScopeDeps {
  globals: ToolLayer;
  knownGlobalNames(): string[];
  reportFault?: (message: string) => void;
  hooks?: ToolHooks;
}

export interface ModelToolCall {
  name: string;
  arguments: unknown;
  callId: string;
  signal?: AbortSignal | LazyAbortController;
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

const NO_RESTRICTIONS: ReadonlySet<Restriction> = new Set();

export class AgentScope implements AgentToolScope, ExecutionScope {
  /** agent.tools: a separate object, so the scope's own methods (dispose, installFilter) are not the agent's. */
  readonly registry: ToolRegistry = new ScopedRegistry(this);
  readonly reportFault: ((message: string) => void) | undefined;
  readonly hooks: ToolHooks | undefined;
  private locals: ToolLayer | undefined;
  private restrictions: Set<Restriction> | undefined;
  /** Made by the first `on('change')`: an agent's own bump is `onChange`, not a listener. */
  private listeners: Listeners | undefined;
  private disposed = false;

  constructor(
    private readonly deps: ScopeDeps,
    private readonly agentOf: () => Agent | undefined,
    private readonly detach: () => void,
    private readonly onChange: (() => void) | undefined,
  ) {
    this.reportFault = deps.reportFault;
    this.hooks = deps.hooks;
  }

  agent(): Agent | undefined {
    return this.agentOf();
  }

  resolve(): ResolvedTool[] {
    return this.disposed ? [] : resolveAll(this.inputs());
  }

  lookup(name: string): ResolvedTool | undefined {
    return this.disposed ? undefined : resolveOne(this.inputs(), name);
  }

  find(name: string): ResolvedTool | undefined {
    return this.lookup(name);
  }

  classify(name: string, args: unknown): ConcurrencyClass {
    return classifyResolved(this.lookup(name), args);
  }

  execute(call: ToolCallRequest): Promise<ToolResult> {
    return this.run(call);
  }

  executeFromModel(call: ModelToolCall, codeMode: CodeMode): Promise<ToolResult> {
    const refusal = modelCallRefusal(call.name, codeMode);
    return refusal === undefined ? this.run(call) : Promise.resolve(refusal);
  }

  private run(call: ScopedCall): Promise<ToolResult> {
    return this.disposed
      ? Promise.resolve(errorResult('DISPOSED', 'This agent tool scope has been disposed'))
      : executeResolved(this, call);
  }

  register(tool: Parameters<ToolRegistry['register']>[0]): Disposer {
    this.assertLive();
    this.locals ??= new ToolLayer();
    const disposer = this.locals.add(tool, 'agent', () => this.changed());
    this.changed();
    return disposer;
  }

  installFilter(filter: ToolFilter, opts: { validate?: boolean } = {}): Disposer {
    this.assertLive();
    const restriction = createRestriction(filter, this.deps.knownGlobalNames(), opts.validate ?? true);
    this.restrictions ??= new Set();
    const restrictions = this.restrictions;
    restrictions.add(restriction);
    this.changed();
    return makeDisposer(() => {
      if (restrictions.delete(restriction)) this.changed();
    });
  }

  filters(): ToolFilter[] {
    return [...(this.restrictions ?? NO_RESTRICTIONS)].map((r) => copyFilter(r.filter));
  }

  on(event: string, fn: () => void): Disposer {
    if (this.disposed) return makeDisposer(() => {});
    this.listeners ??= new Listeners();
    return this.listeners.add(checkEvent(event, fn));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.locals?.clear();
    this.restrictions?.clear();
    this.listeners?.clear();
    this.detach();
  }

  onGlobalChange(): void {
    if (!this.disposed) this.changed();
  }

  private changed(): void {
    callContained(this.onChange);
    this.listeners?.emit();
  }

  private inputs(): ScopeInputs {
    return {
      globals: this.deps.globals.tools,
      locals: this.locals?.tools,
      restrictions: this.restrictions ?? NO_RESTRICTIONS,
      agent: this.agentOf(),
    };
  }

  private assertLive(): void {
    if (this.disposed) throw new BroodError('DISPOSED', 'This agent tool scope has been disposed');
  }
}

/** agent.tools over a scope (a private field: the guarded proxy calls methods on this object). */
class ScopedRegistry implements ToolRegistry {
  readonly #scope: AgentScope;

  constructor(scope: AgentScope) {
    this.#scope = scope;
  }

  register(tool: Parameters<ToolRegistry['register']>[0]): Disposer {
    return this.#scope.register(tool);
  }
  restrict(filter: ToolFilter): Disposer {
    return this.#scope.installFilter(filter, { validate: true });
  }
  view(): ReturnType<ToolRegistry['view']> {
    return toView(this.#scope.resolve());
  }
  execute(call: ToolCallRequest): Promise<ToolResult> {
    return this.#scope.execute(call);
  }
  sdk(): string {
    return renderSdk(this.#scope.resolve().map((tool) => tool.schema));
  }
  on(event: 'change', fn: () => void): Disposer {
    return this.#scope.on(event, fn);
  }
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

export function checkEvent(event: string, fn: () => void): () => void {
  if (event !== 'change')
    throw new BroodError('INVALID_CONFIG', `Unknown tool registry event "${event}" (only "change")`);
  return fn;
}
