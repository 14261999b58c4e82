/**
 * The per-runtime prompt system: the global layer (`brood.prompt`) plus one scope per agent.
 *
 * All state (layers, the registration counter) lives in the closure of createPromptSystem, so two
 * runtimes in one process never see each other's sections or tie-break order.
 */

import type { Agent, AssembledPrompt, PromptContext, PromptRegistry, PromptSection, ToolView } from '../types.js';
import type { Disposer } from '../util/disposer.js';
import { assemblePrompt } from './assemble.js';
import { type LayerHooks, PromptLayer, type VariableProvider } from './registry.js';

export { BUILTIN_VARIABLES } from './registry.js';

/** The deployment persona's section name (SPEC §5.1); agent personas shadow it under the same name. */
export const PERSONA_SECTION = 'deployment:persona';
export const PERSONA_ORDER = 0;

export interface PromptScopeOptions {
  /** Called lazily at assembly time: the scope is usually created before its Agent object exists. */
  agent: () => Agent | undefined;
  /** The scope's live tool view, for `tool`-bound sections and PromptContext.tools. */
  tools: () => ToolView;
  /** Values of agent_id, depth, provider, model for this scope. */
  builtins: () => Record<string, string | undefined>;
  /** Fires when this scope's own layer changes (the runtime bumps that agent's view version). */
  onChange?: () => void;
}

export interface PromptScope {
  /** The agent layer (`agent.prompt`); its assemble() is the same as the scope's. */
  readonly registry: PromptRegistry;
  /**
   * `tools`: the scope's tool view when the caller has just resolved it (a plan's view resolves the
   * tools once for the prompt, the classes and the schemas); read live otherwise.
   */
  assemble(tools?: ToolView): AssembledPrompt;
  /** Drops the agent layer; its registry then rejects registrations and assembly with DISPOSED. */
  dispose(): void;
}

export interface PromptSystem {
  /** `brood.prompt`: assembles with no agent, the global tool view and no built-in values. */
  readonly global: PromptRegistry;
  createScope(options: PromptScopeOptions): PromptScope;
}

export interface PromptSystemOptions {
  globalTools: () => ToolView;
  /**
   * Fires on a registration or removal in the global layer, which may change every agent's prompt.
   * Agent-layer changes are reported per scope (PromptScopeOptions.onChange), so one child's setup
   * never makes every running driver re-fetch its view.
   */
  onChange?: () => void;
}

export function createPromptSystem(options: PromptSystemOptions): PromptSystem {
  let seq = 0;
  const hooks: LayerHooks = {
    nextSeq: () => ++seq,
    changed: () => options.onChange?.(),
  };
  const globalLayer = new PromptLayer('the global layer', hooks);
  const global = makeRegistry(globalLayer, () =>
    assemblePrompt({ layers: [globalLayer], ctx: { agent: undefined, tools: options.globalTools() }, builtins: {} }),
  );
  const system: ScopeSystem = { globalLayer, nextSeq: hooks.nextSeq, scopeCount: 0 };
  return {
    global,
    createScope: (scopeOptions) => new AgentPromptScope(system, scopeOptions),
  };
}

interface ScopeSystem {
  readonly globalLayer: PromptLayer;
  readonly nextSeq: () => number;
  scopeCount: number;
}

/**
 * One agent's prompt scope. Its methods are the class's (a wide fan-out makes one per child); it is
 * its own layer's hooks, and its registry (whose arrow members hosts may pass around unbound) is made
 * when first read.
 */
class AgentPromptScope implements PromptScope, LayerHooks {
  private readonly layer: PromptLayer;
  private madeRegistry: PromptRegistry | undefined;

  constructor(
    private readonly system: ScopeSystem,
    private readonly options: PromptScopeOptions,
  ) {
    this.layer = new PromptLayer(`agent layer #${++system.scopeCount}`, this);
  }

  get registry(): PromptRegistry {
    this.madeRegistry ??= makeRegistry(this.layer, () => this.assemble());
    return this.madeRegistry;
  }

  assemble(tools?: ToolView): AssembledPrompt {
    this.layer.assertOpen();
    const options = this.options;
    const ctx: PromptContext = { agent: options.agent(), tools: tools ?? options.tools() };
    return assemblePrompt({ layers: [this.system.globalLayer, this.layer], ctx, builtins: options.builtins() });
  }

  dispose(): void {
    this.layer.close();
  }

  nextSeq(): number {
    return this.system.nextSeq();
  }

  changed(): void {
    this.options.onChange?.();
  }
}

/** Arrow members so hosts can pass `agent.prompt.register` around unbound. */
function makeRegistry(layer: PromptLayer, assemble: () => AssembledPrompt): PromptRegistry {
  return {
    register: (section: PromptSection): Disposer => layer.registerSection(section),
    variable: (name: string, value: VariableProvider): Disposer => layer.registerVariable(name, value),
    assemble,
  };
}

/** Installs a persona (deployment or agent-scoped) as the order-0 `deployment:persona` section. */
export function registerPersona(registry: PromptRegistry, text: string): Disposer {
  return registry.register({ name: PERSONA_SECTION, order: PERSONA_ORDER, text });
}
