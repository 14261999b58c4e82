/**
 * createBrood: wires the per-runtime parts (registries, sessions, catalog, runner) and owns their
 * lifetimes. Policy lives here and in the parts; drivers only ever see resolved plans.
 */
import type { ResourceLimits } from 'node:worker_threads';
import { AgentImpl } from './agents/agent.js';
import { composeAgent } from './agents/factory.js';
import { rebuildSession } from './agents/history.js';
import type { RuntimeCore } from './agents/runtime-core.js';
import { broodOptionsSchema, createAgentOptionsSchema, parseConfig, type ParsedBroodOptions } from './config.js';
import { makeDisposer, type Disposer } from './disposer.js';
import { VersionCell } from './driver/versions.js';
import { BroodError } from './errors.js';
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
  private readonly core: RuntimeCore;
  private readonly runner: DriverRunner;
  private readonly codeMode: CodeMode;
  private closing: Promise<void> | undefined;

  constructor(options: ParsedBroodOptions, internal: NonNullable<BroodOptions['_internal']>) {
    const globalVersion = new VersionCell();
    const toolSystem = createToolSystem({ onChange: () => globalVersion.bump() });
    const promptSystem = createPromptSystem({ globalTools: () => toolSystem.global.view(), onChange: () => globalVersion.bump() });
    const models = options.models ?? [scriptedModels({ id: 'scripted' })];
    this.models = createModelCatalog(models);
    this.sessions = (options.sessions as SessionStore | undefined) ?? memorySessions();
    this.codeMode = options.codeMode ?? 'native';
    this.runner = options.runner === 'inline' ? new InlineRunner() : createWorkerRunner(options);
    const ids = internal.generateId ?? defaultIds;
    const agents = new Map<string, AgentImpl>();
    this.core = {
      tools: toolSystem,
      prompt: promptSystem,
      catalog: this.models,
      store: this.sessions,
      ids,
      agents,
      agentDeps: {
        store: this.sessions,
        runner: this.runner,
        ids,
        now: internal.now ?? Date.now,
        globalVersion,
        limits: {
          maxParallelToolCalls: options.maxParallelToolCalls ?? 10,
          codeMode: this.codeMode,
          codeBusyTimeoutMs: options.codeBusyTimeoutMs ?? 5_000,
          codeWallTimeoutMs: options.codeWallTimeoutMs ?? 300_000,
        },
        modelConfig: (provider) => requireModelConfig(this.models, provider),
        onDisposed: (id) => agents.delete(id),
      },
    };
    this.tools = toolSystem.global;
    this.prompt = promptSystem.global;
    if (options.persona !== undefined) registerPersona(this.prompt, options.persona);
  }

  async createAgent(options: CreateAgentOptions): Promise<Agent> {
    this.assertOpen();
    const parsed = parseConfig(createAgentOptionsSchema, options, 'createAgent options');
    const id = parsed.id ?? this.core.ids('agent');
    if (this.core.agents.has(id)) throw new BroodError('INVALID_CONFIG', `an agent with id '${id}' already exists`);
    const route = this.models.resolve(parsed.model);
    const depth = parsed.depth === undefined ? 0 : validateDelegationDepth(parsed.depth);
    const codeMode = parsed.codeMode ?? this.codeMode;
    const { agent, rollback } = composeAgent(this.core, {
      id, depth, parentId: undefined, route, codeMode, validateFilter: true,
      ...(parsed.persona === undefined ? {} : { persona: parsed.persona }),
      ...(parsed.toolFilter === undefined ? {} : { toolFilter: parsed.toolFilter }),
      session: { nextSeq: 0, history: [], ownStart: 0, lastTurn: 0, unclaimed: [] },
    });
    try {
      await this.sessions.create({ id, createdAt: Date.now(), delegationDepth: depth, model: route });
    } catch (error) {
      rollback();
      throw error;
    }
    const descriptor = { model: route, codeMode, ...(parsed.persona === undefined ? {} : { persona: parsed.persona }), ...(parsed.toolFilter === undefined ? {} : { toolFilter: parsed.toolFilter }) };
    await agent.writer.append([{ type: 'agent/descriptor', data: descriptor }]);
    this.core.agents.set(id, agent);
    return agent;
  }

  async resumeAgent(sessionId: string, options: { model?: ModelRoute; depth?: number } = {}): Promise<Agent> {
    this.assertOpen();
    const live = this.core.agents.get(sessionId);
    if (live) return live;
    const { header, events } = await this.sessions.read(sessionId);
    const rebuilt = rebuildSession(events);
    const depth = Math.max(header.delegationDepth, options.depth === undefined ? 0 : validateDelegationDepth(options.depth));
    const route = this.models.resolve(options.model ?? rebuilt.lastRoute ?? header.model);
    const descriptor = rebuilt.descriptor ?? {};
    const { agent } = composeAgent(this.core, {
      id: sessionId, depth, parentId: header.parentSession, route,
      codeMode: isCodeMode(descriptor.codeMode) ? descriptor.codeMode : this.codeMode,
      validateFilter: false,
      ...(typeof descriptor.persona === 'string' ? { persona: descriptor.persona } : {}),
      ...(isToolFilter(descriptor.toolFilter) ? { toolFilter: descriptor.toolFilter } : {}),
      session: { nextSeq: events.length, history: rebuilt.history, ownStart: header.seedLength ?? 0, lastTurn: rebuilt.lastTurn, unclaimed: rebuilt.unclaimed },
    });
    if (rebuilt.openTurn !== undefined) {
      // A turn a crash interrupted is closed, never re-run: its tools may already have had side effects.
      await agent.writer.append([{ type: 'turn/end', data: { turn: rebuilt.openTurn, reason: 'error', diagnostic: 'interrupted' } }]);
      await agent.writer.flush();
    }
    this.core.agents.set(sessionId, agent);
    agent.wake();
    return agent;
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
    await this.runner.close();
    const store = this.sessions as SessionStore & { close?: () => Promise<void> };
    await store.close?.();
  }

  private assertOpen(): void {
    if (this.closing) throw new BroodError('DISPOSED', 'this brood runtime is closed');
  }
}

function createWorkerRunner(options: ParsedBroodOptions): DriverRunner {
  const pool = options.pool ?? {};
  return new WorkerRunner({
    ...(pool.threads === undefined ? {} : { threads: pool.threads }),
    ...(pool.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: pool.idleTimeoutMs }),
    resourceLimits: pool.resourceLimits ?? { maxOldGenerationSizeMb: 1024 },
  });
}

function requireModelConfig(catalog: ModelCatalog, provider: string): ModelProviderConfig {
  const config = catalog.config(provider);
  if (!config) throw new BroodError('UNKNOWN_MODEL', `unknown model provider '${provider}'`);
  return config;
}

function isCodeMode(value: unknown): value is CodeMode {
  return value === 'native' || value === 'code' || value === 'both';
}

function isToolFilter(value: unknown): value is ToolFilter {
  return typeof value === 'object' && value !== null && ('allow' in value || 'deny' in value);
}
