/**
 * createBrood: wires the per-runtime parts (registries, sessions, catalog, runner) and owns their
 * lifetimes. Policy lives here and in the parts; drivers only ever see resolved plans.
 */
import type { ResourceLimits } from 'node:worker_threads';
import { AgentImpl } from './agents/agent.js';
import { composeAgent } from './agents/factory.js';
import { restoreAgent } from './agents/restore.js';
import { INTERNALS, type BroodInternals } from './internals.js';
import { ContainedEvents } from './subagents/events.js';
import type { SubagentCore } from './subagents/core.js';
import { forkProvider, spawnProvider } from './subagents/providers.js';
import { SubagentRuntimeImpl } from './subagents/runtime.js';
import type { SubagentProvider, SubagentRuntime } from './subagents/types.js';
import { broodOptionsSchema, createAgentOptionsSchema, parseConfig, type ParsedBroodOptions } from './config.js';
import { makeDisposer, type Disposer } from './disposer.js';
import { VersionCell } from './driver/versions.js';
import { BroodError } from './errors.js';
import { guardDisposed } from './guard.js';
import { defaultIds, type IdGenerator } from './ids.js';
import { createModelCatalog, type ModelCatalog } from './models/catalog.js';
import { scriptedModels } from './models/scripted.js';
import type { ModelProviderConfig } from './models/types.js';
import { createPromptSystem, registerPersona } from './prompt/system.js';
import { memorySessions } from './sessions/memory.js';
import { validateDelegationDepth } from './sessions/validate.js';
import { createToolSystem } from './tools/system.js';
import type { Agent, CodeMode, ModelRoute, PromptRegistry, SessionStore, ToolFilter, ToolRegistry } from './types.js';
import { InlineRunner } from './workers/inline-runner.js';
import type { DriverRunner } from './workers/runner.js';
import { WorkerRunner } from './workers/worker-runner.js';

export interface BroodOptions {
  models?: ModelProviderConfig[];
  sessions?: SessionStore;
  persona?: string;
  maxParallelToolCalls?: number;
  codeMode?: CodeMode;
  pool?: { threads?: number; idleTimeoutMs?: number; cancelGraceMs?: number; hangTimeoutMs?: number; resourceLimits?: ResourceLimits };
  codeBusyTimeoutMs?: number;
  codeWallTimeoutMs?: number;
  providers?: SubagentProvider[];
  runner?: 'worker' | 'inline';
  preferences?: { get(key: string): unknown };
  /** Deterministic ids and clock for tests (like the AI SDK's `_internal`). */
  _internal?: { generateId?: IdGenerator; now?: () => number };
}

export interface CreateAgentOptions {
  id?: string;
  model: ModelRoute;
  persona?: string;
  toolFilter?: ToolFilter;
  codeMode?: CodeMode;
  depth?: number;
}

export interface BroodPlugin {
  name: string;
  install(brood: Brood): Disposer;
}

export interface Brood {
  readonly tools: ToolRegistry;
  readonly prompt: PromptRegistry;
  readonly models: ModelCatalog;
  readonly sessions: SessionStore;
  readonly subagents: SubagentRuntime;
  createAgent(options: CreateAgentOptions): Promise<Agent>;
  resumeAgent(sessionId: string, options?: { model?: ModelRoute; depth?: number }): Promise<Agent>;
  use(plugin: BroodPlugin): Disposer;
  close(): Promise<void>;
}

export function createBrood(options: BroodOptions = {}): Brood {
  const { _internal, ...rest } = options;
  const parsed = parseConfig(broodOptionsSchema, rest, 'createBrood options');
  return new BroodRuntime(parsed, _internal ?? {});
}

class BroodRuntime implements Brood {
  readonly tools: ToolRegistry;
  readonly prompt: PromptRegistry;
  readonly models: ModelCatalog;
  readonly sessions: SessionStore;
  readonly subagents: SubagentRuntimeImpl;
  readonly [INTERNALS]: BroodInternals;
  private readonly core: SubagentCore;
  private readonly codeMode: CodeMode;
  private closing: Promise<void> | undefined;

  constructor(options: ParsedBroodOptions, internal: NonNullable<BroodOptions['_internal']>) {
    this.models = createModelCatalog(options.models ?? [scriptedModels({ id: 'scripted' })]);
    this.sessions = (options.sessions as SessionStore | undefined) ?? memorySessions();
    this.codeMode = options.codeMode ?? 'native';
    this.core = buildCore(options, internal, this.models, this.sessions, this.codeMode);
    this.core.restore = (id) => restoreAgent(this.core, id);
    this.core.onRestored = (agent, descriptor) => this.subagents.attachRestored(agent, typeof descriptor.provider === 'string' ? descriptor.provider : undefined);
    const closed = (): boolean => this.closing !== undefined;
    this.subagents = new SubagentRuntimeImpl(this.core, closed);
    const baseDisposed = this.core.agentDeps.onDisposed;
    this.core.agentDeps.onDisposed = (id) => {
      baseDisposed(id);
      this.subagents.jobs.cancelOwnedBy(id);
    };
    this.tools = guardDisposed(this.core.tools.global, closed, 'this brood runtime', ['execute']);
    this.prompt = guardDisposed(this.core.prompt.global, closed, 'this brood runtime', []);
    this[INTERNALS] = {
      core: this.core,
      jobs: this.subagents.jobs,
      agentImpl: (agent) => {
        const impl = agent === undefined ? undefined : this.core.agents.get(agent.id);
        return impl === agent ? impl : undefined;
      },
      addMountHook: (hook) => this.subagents.addMountHook(hook),
      reservations: new Map(),
      shared: new Map(),
    };
    if (options.persona !== undefined) registerPersona(this.prompt, options.persona);
    try {
      for (const provider of (options.providers as SubagentProvider[] | undefined) ?? [spawnProvider(), forkProvider()]) this.subagents.register(provider);
    } catch (error) {
      // createBrood failed: leave nothing behind (release the pool's threads now, not at exit).
      void this.core.agentDeps.runner.close();
      throw error;
    }
  }

  async createAgent(options: CreateAgentOptions): Promise<Agent> {
    this.assertOpen();
    const parsed = parseConfig(createAgentOptionsSchema, options, 'createAgent options');
    const id = parsed.id ?? this.core.ids('agent');
    if (this.core.agents.has(id)) throw new BroodError('INVALID_CONFIG', `an agent with id '${id}' already exists`);
    const route = this.models.resolve(parsed.model);
    const depth = parsed.depth === undefined ? 0 : validateDelegationDepth(parsed.depth);
    const codeMode = parsed.codeMode ?? this.codeMode;
    // Sampled once, at creation: later preference changes never affect an existing session (SPEC §11.9).
    const modelSelectionEnabled = this.core.preferences?.get('subagent-model-selection.enabled') === true;
    const { agent, rollback } = composeAgent(this.core, {
      id, depth, parentId: undefined, route, codeMode, mode: 'top', modelSelectionEnabled, validateFilter: true,
      ...(parsed.persona === undefined ? {} : { persona: parsed.persona }),
      ...(parsed.toolFilter === undefined ? {} : { toolFilter: parsed.toolFilter }),
      session: { nextSeq: 0, history: [], ownStart: 0, lastTurn: 0, unclaimed: [], lastRequestRoute: undefined },
    });
    try {
      await this.sessions.create({ id, createdAt: this.core.agentDeps.now(), delegationDepth: depth, model: route });
    } catch (error) {
      rollback();
      throw error;
    }
    const descriptor = { model: route, codeMode, ...(parsed.persona === undefined ? {} : { persona: parsed.persona }), ...(parsed.toolFilter === undefined ? {} : { toolFilter: parsed.toolFilter }) };
    agent.writer.append([{ type: 'agent/descriptor', data: descriptor }, ...(modelSelectionEnabled ? [{ type: 'subagent/model-selection-enabled', data: {} }] : [])]);
    this.core.agents.set(id, agent);
    return agent;
  }

  async resumeAgent(sessionId: string, options: { model?: ModelRoute; depth?: number } = {}): Promise<Agent> {
    this.assertOpen();
    return this.core.agents.get(sessionId) ?? restoreAgent(this.core, sessionId, options);
  }

  use(plugin: BroodPlugin): Disposer {
    this.assertOpen();
    if (typeof plugin?.install !== 'function') throw new BroodError('INVALID_CONFIG', 'a plugin needs a name and an install(brood) function');
    const dispose = plugin.install(this);
    return makeDisposer(() => dispose());
  }

  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    await Promise.all([...this.core.agents.values()].map((agent) => agent.dispose()));
    await Promise.all([this.core.agentDeps.runner.close(), this.core.inlineRunner.close()]);
    const store = this.sessions as SessionStore & { close?: () => Promise<void> };
    await store.close?.();
  }

  private assertOpen(): void {
    if (this.closing) throw new BroodError('DISPOSED', 'this brood runtime is closed');
  }
}

function buildCore(
  options: ParsedBroodOptions,
  internal: NonNullable<BroodOptions['_internal']>,
  catalog: ModelCatalog,
  store: SessionStore,
  codeMode: CodeMode,
): SubagentCore {
  const globalVersion = new VersionCell();
  const tools = createToolSystem({ onChange: () => globalVersion.bump() });
  const prompt = createPromptSystem({ globalTools: () => tools.global.view(), onChange: () => globalVersion.bump() });
  const modelConfigs = catalog.providers().map(({ id }) => catalog.config(id)).filter((config): config is ModelProviderConfig => config !== undefined);
  const inlineRunner = new InlineRunner(modelConfigs);
  const defaultRunnerKind = options.runner ?? 'worker';
  const ids = internal.generateId ?? defaultIds;
  const agents = new Map<string, AgentImpl>();
  const core: SubagentCore = {
    tools,
    prompt,
    catalog,
    store,
    ids,
    agents,
    inlineRunner,
    defaultRunnerKind,
    preferences: options.preferences,
    events: new ContainedEvents(),
    detachedRuns: new WeakSet(),
    parentOf: (agent) => parentOf(agents, agent),
    restore: () => Promise.reject(new BroodError('INTERNAL', 'runtime not wired')),
    onRestored: () => undefined,
    agentDeps: {
      store,
      runner: defaultRunnerKind === 'inline' ? inlineRunner : createWorkerRunner(options, modelConfigs),
      ids,
      now: internal.now ?? Date.now,
      globalVersion,
      limits: {
        maxParallelToolCalls: options.maxParallelToolCalls ?? 10,
        codeMode,
        codeBusyTimeoutMs: options.codeBusyTimeoutMs ?? 5_000,
        codeWallTimeoutMs: options.codeWallTimeoutMs ?? 300_000,
        cancelGraceMs: options.pool?.cancelGraceMs ?? 2_000,
      },
      onDisposed: (id) => agents.delete(id),
    },
  };
  return core;
}

function parentOf(agents: Map<string, AgentImpl>, agent: Agent): AgentImpl {
  const impl = agent === undefined || agent === null ? undefined : agents.get(agent.id);
  if (impl === undefined || impl !== agent) {
    if ((agent as Partial<Agent> | undefined)?.status === 'disposed') throw new BroodError('DISPOSED', `agent ${agent.id} is disposed`);
    throw new BroodError('INVALID_CONFIG', 'the parent is not a live agent of this brood runtime');
  }
  if (impl.isDisposed) throw new BroodError('DISPOSED', `agent ${impl.id} is disposed`);
  return impl;
}

function createWorkerRunner(options: ParsedBroodOptions, models: ModelProviderConfig[]): DriverRunner {
  const pool = options.pool ?? {};
  return new WorkerRunner({
    models,
    ...(pool.threads === undefined ? {} : { threads: pool.threads }),
    ...(pool.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: pool.idleTimeoutMs }),
    ...(pool.hangTimeoutMs === undefined ? {} : { hangTimeoutMs: pool.hangTimeoutMs }),
    resourceLimits: pool.resourceLimits ?? { maxOldGenerationSizeMb: 1024 },
  });
}

