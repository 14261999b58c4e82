/**
 * Composes an agent privately: scopes, restriction, persona, Code Mode SDK section, route, and one
 * prompt assembly — all before anything is published. On any failure every step is rolled back, so
 * a rejected creation leaves no scope, no section, no listener behind.
 */

import { BroodError, errorMessage } from '../errors.js';
import type { ChatMessage } from '../models/types.js';
import { type PromptScopeOptions, registerPersona } from '../prompt/system.js';
import type { Budget } from '../scheduler/types.js';
import { renderSdk } from '../tools/code-mode-sdk.js';
import type { AgentToolScope } from '../tools/system.js';
import type { CodeMode, ModelRoute, ToolFilter, ToolView } from '../types.js';
import { DisposerStack } from '../util/disposer.js';
import type { DriverRunner } from '../wire/runner.js';
import { AgentImpl } from './agent.js';
import type { RuntimeCore } from './runtime-core.js';
import type { AgentInit } from './types.js';

export interface AgentComposition {
  id: string;
  depth: number;
  parentId: string | undefined;
  route: ModelRoute;
  codeMode: CodeMode;
  /** Model requests per turn; default: the runtime's maxSteps. */
  maxSteps?: number;
  /** createAgent's budget for every turn. */
  budget?: Budget;
  mode: AgentInit['mode'];
  label?: string;
  modelSelectionEnabled: boolean;
  /** Where this agent's driver runs, when not the runtime's default (inlineProvider children). */
  runner?: DriverRunner;
  persona?: string;
  toolFilter?: ToolFilter;
  /** A filter restored from a session is reinstalled without re-validation (SPEC §6). */
  validateFilter: boolean;
  /** Extra private setup (e.g. a provider's hook); throwing aborts the composition. */
  setup?: (agent: AgentImpl) => void;
  session: Pick<AgentInit, 'nextSeq' | 'history' | 'ownStart' | 'lastTurn' | 'unclaimed' | 'lastRequestRoute'>;
}

/**
 * The session state of an agent the host creates: nothing logged yet, and the conversation it was
 * given (none, or createAgent's history). That conversation is not the agent's own work: its own
 * messages start after it (a scripted model's script included).
 */
export function newSession(history: ChatMessage[]): AgentComposition['session'] {
  return { nextSeq: 0, history, ownStart: history.length, lastTurn: 0, unclaimed: [], lastRequestRoute: undefined };
}

export const SDK_SECTION = 'tools:sdk';
const SDK_ORDER = 150;

export function composeAgent(core: RuntimeCore, spec: AgentComposition): { agent: AgentImpl; rollback: () => void } {
  const rollback = new DisposerStack();
  const owner = new ScopeOwner(spec);
  const tools = core.tools.createScope(owner.agentOf, owner.bumpOwn);
  owner.toolScope = tools;
  rollback.add(() => tools.dispose());
  const prompt = core.prompt.createScope(owner);
  let agent: AgentImpl | undefined;
  rollback.add(() => prompt.dispose());
  try {
    if (spec.toolFilter !== undefined) tools.installFilter(spec.toolFilter, { validate: spec.validateFilter });
    if (spec.persona !== undefined) registerPersona(prompt.registry, spec.persona);
    if (spec.codeMode !== 'native') {
      // From the view this assembly was given (the plan's one resolution), like tool-bound sections.
      prompt.registry.register({ name: SDK_SECTION, order: SDK_ORDER, text: (ctx) => renderSdk(ctx.tools.schemas) });
    }
    const { id, depth, parentId, route, codeMode, mode, modelSelectionEnabled } = spec;
    const deps = spec.runner ? { ...core.agentDeps, runner: spec.runner } : core.agentDeps;
    const maxSteps = spec.maxSteps ?? core.agentDeps.limits.maxSteps;
    const label = spec.label === undefined ? {} : { label: spec.label };
    const budget = spec.budget === undefined ? {} : { budget: spec.budget };
    agent = new AgentImpl(
      {
        id,
        depth,
        parentId,
        route,
        codeMode,
        maxSteps,
        mode,
        ...label,
        ...budget,
        modelSelectionEnabled,
        tools,
        prompt,
        ...spec.session,
      },
      deps,
    );
    owner.composed = agent;
    // An agent rolled back is never disposed: its cells go back here (a later dispose gives back nothing twice).
    const cells = agent.cells;
    rollback.add(() => cells.release());
    if (spec.setup) runSetupHook(spec.setup, agent);
    prompt.assemble();
  } catch (error) {
    rollback.disposeAll();
    throw error;
  }
  return { agent, rollback: () => rollback.disposeAll() };
}

/**
 * What an agent's tool and prompt scopes ask of it, read when they resolve and assemble (the scopes
 * are made before the agent exists): one object per agent instead of a closure per question, and it
 * keeps of the composition only what the built-in variables read.
 */
class ScopeOwner implements PromptScopeOptions {
  /** The agent, once it is built. */
  composed: AgentImpl | undefined;
  toolScope: AgentToolScope | undefined;
  private readonly id: string;
  private readonly depth: number;
  private readonly route: ModelRoute;
  /** The tool scope's view of the agent (a function: the tool system takes one). */
  readonly agentOf = (): AgentImpl | undefined => this.composed;
  /** A change to what the agent's tool scope presents: its drivers re-fetch their view. */
  readonly bumpOwn = (): void => this.composed?.cells.view.bump();

  constructor(spec: AgentComposition) {
    this.id = spec.id;
    this.depth = spec.depth;
    this.route = spec.route;
  }

  agent(): AgentImpl | undefined {
    return this.composed;
  }

  tools(): ToolView {
    return (this.toolScope as AgentToolScope).registry.view();
  }

  onChange(): void {
    this.composed?.cells.view.bump();
  }

  builtins(): Record<string, string | undefined> {
    const route = this.composed?.route ?? this.route;
    return { agent_id: this.id, depth: String(this.depth), provider: route.provider, model: route.model };
  }
}

function runSetupHook(setup: (agent: AgentImpl) => void, agent: AgentImpl): void {
  try {
    setup(agent);
  } catch (error) {
    throw new BroodError('SETUP_FAILED', `provider setup failed: ${errorMessage(error)}`, { cause: error });
  }
}
