/**
 * The runtime engine behind `createBrood`: every per-runtime part built in one pass, in dependency
 * order, and never re-wired afterwards. Agents and the subagent runtime see it through the narrow
 * interfaces their layers declare (`RuntimeCore`, `SubagentCore`); the public facade (src/brood.ts)
 * holds it privately; plugins reach it through the typed `PluginAccess`.
 */
import type { AgentImpl } from '../agents/agent.js';
import { composeAgent, newSession } from '../agents/factory.js';
import { givenHistory, historyEvent } from '../agents/given-history.js';
import { RequestTexts } from '../agents/request-texts.js';
import { type RestoreHooks, restoreAgent } from '../agents/restore.js';
import { checkContext } from '../agents/signals.js';
import type { AgentDeps } from '../agents/types.js';
import { ApprovalGate } from '../approvals/gate.js';
import type { ApprovalsOptions } from '../approvals/types.js';
import { type Clock, epochNow, systemClock } from '../clock.js';
import {
  createAgentOptionsSchema,
  isValidSessionId,
  type ParsedBroodOptions,
  parseConfig,
  resumeAgentOptionsSchema,
  usageOptionsSchema,
} from '../config.js';
import { validateDelegationDepth } from '../depth.js';
import { BroodError } from '../errors.js';
import { EventHub } from '../events/hub.js';
import { schedulerEvents } from '../events/scheduler-events.js';
import { checkAiSdkRoute } from '../models/ai-sdk/module-model.js';
import { ModelProxy } from '../models/ai-sdk/proxy-server.js';
import { checkApiKeyEnv } from '../models/api-key.js';
import type { ModelCatalog } from '../models/catalog.js';
import { partFormatOf } from '../models/part-formats.js';
import type { ModelProviderConfig } from '../models/types.js';
import { createPromptSystem, type PromptSystem } from '../prompt/system.js';
import { isQueueRunnerConfig, type QueueRunnerConfig } from '../queue/config.js';
import { QueueRunner } from '../queue/queue-runner.js';
import { Scheduler } from '../scheduler/scheduler.js';
import type { SchedulerView } from '../scheduler/types.js';
import { modelSelectionEvents } from '../sessions/event-types.js';
import { readUsageTree } from '../sessions/usage-tree.js';
import type { SubagentCore } from '../subagents/core.js';
import { ContainedEvents } from '../subagents/events.js';
import { SubagentRuntimeImpl } from '../subagents/runtime.js';
import type { SubagentEventName, SubagentRun } from '../subagents/types.js';
import { createTelemetry } from '../telemetry/setup.js';
import { InlineRunner } from '../thread/inline-runner.js';
import { createToolSystem, type ToolSystem } from '../tools/system.js';
import type { Agent, CodeMode, SessionStore, UsageNode } from '../types.js';
import { describe } from '../util/describe.js';
import type { IdGenerator } from '../util/ids.js';
import { defaultIds } from '../util/ids.js';
import type { DriverRunner } from '../wire/runner.js';
import { CellSlabs, VersionCell } from '../wire/version-cell.js';
import type { CreateAgentOptions, ResumeAgentOptions } from './agent-options.js';
import { AsyncPlugins } from './async-plugins.js';
import { type DiagnosticSink, diagnosticSink } from './diagnostics.js';
import { agentLimits, createWorkerRunner, driverKind } from './option-parts.js';
import { prepareOwnedJobs } from './recover-jobs.js';

export interface RuntimeParts {
  options: ParsedBroodOptions;
  catalog: ModelCatalog;
  store: SessionStore;
  generateId?: IdGenerator;
  now?: () => number;
  setTimer?: Clock['setTimeout'];
}

export class Runtime implements SubagentCore {
  readonly tools: ToolSystem;
  readonly prompt: PromptSystem;
  readonly catalog: ModelCatalog;
  readonly store: SessionStore;
  readonly ids: IdGenerator;
  readonly agents = new Map<string, AgentImpl>();
  readonly inlineRunner: DriverRunner;
  readonly defaultRunnerKind: 'worker' | 'inline';
  readonly preferences: { get(key: string): unknown } | undefined;
  readonly events = new ContainedEvents<SubagentEventName>();
  readonly detachedRuns = new WeakSet<SubagentRun>();
  readonly quietParents = new WeakSet<object>();
  readonly agentDeps: AgentDeps;
  readonly approvals: ApprovalGate;
  readonly codeMode: CodeMode;
  readonly subagents: SubagentRuntimeImpl;
  /** Faults with no caller to reject (SubagentCore.reportBackgroundError). */
  readonly reportBackgroundError: DiagnosticSink;
  private closing: Promise<void> | undefined;
  /** Asynchronous plugins (mcpTools): close() waits for installs under way and disposes them. */
  readonly asyncPlugins = new AsyncPlugins();
  /** One runner per queueRunner config this runtime uses (createBrood's, spawnProvider's). */
  private readonly queueRunners = new Map<QueueRunnerConfig, QueueRunner>();
  private readonly modelConfigs: ModelProviderConfig[];
  /** True unless the drivers run on queue hosts (which read apiKeyEnv in their own environment). */
  private readonly sendsFromHere: boolean;

  constructor({ options, catalog, store, generateId, now, setTimer }: RuntimeParts) {
    this.reportBackgroundError = diagnosticSink(options.onDiagnostic);
    this.sendsFromHere = !isQueueRunnerConfig(options.runner);
    // First: a telemetry option without its package fails createBrood before any thread starts.
    const telemetry =
      options.telemetry &&
      createTelemetry(options.telemetry, catalog, this.reportBackgroundError, driverKind(options.runner));
    const cells = new CellSlabs();
    // Its own cell, not one of the slabs' (those are the agents').
    const globalVersion = new VersionCell();
    this.tools = createToolSystem({
      onChange: () => globalVersion.bump(),
      reportFault: this.reportBackgroundError,
      ...(options.hooks ? { hooks: options.hooks } : {}),
    });
    this.prompt = createPromptSystem({
      globalTools: () => this.tools.global.view(),
      onChange: () => globalVersion.bump(),
    });
    this.catalog = catalog;
    this.store = store;
    this.ids = generateId ?? defaultIds;
    this.codeMode = options.codeMode ?? 'native';
    this.preferences = options.preferences;
    const modelConfigs = catalog
      .providers()
      .map(({ id }) => catalog.config(id))
      .filter((config): config is ModelProviderConfig => config !== undefined);
    this.modelConfigs = modelConfigs;
    // Before any thread starts: a proxied provider without its objects fails createBrood.
    const modelProxy = ModelProxy.for(modelConfigs);
    this.inlineRunner = new InlineRunner(modelConfigs);
    // 'worker' stands for the runtime's own runner, whatever it is (the pool, or a queue).
    this.defaultRunnerKind = options.runner === 'inline' ? 'inline' : 'worker';
    // Session and host events share one clock, epoch ms with sub-millisecond precision (trace shows µs).
    const clockNow = now ?? epochNow;
    const hub = new EventHub(this.agents, clockNow);
    const scheduler = new Scheduler(options.limits, clockNow, schedulerEvents(hub, this.agents));
    const timers = setTimer === undefined ? systemClock : { setTimeout: setTimer };
    this.approvals = new ApprovalGate(options.approvals as ApprovalsOptions | undefined, {
      ids: this.ids,
      hub,
      now: clockNow,
      clock: timers,
      // A call waiting for the host holds no turn slot (limits.agents); a cancelled one takes none back.
      whileParked: (agent, parked, signal) => this.agents.get(agent.id)?.lease?.lend(parked, signal) ?? parked,
    });
    this.agentDeps = {
      store,
      runner:
        options.runner === 'inline'
          ? this.inlineRunner
          : isQueueRunnerConfig(options.runner)
            ? this.queueRunner(options.runner)
            : createWorkerRunner(options, modelConfigs, this.reportBackgroundError),
      ids: this.ids,
      now: clockNow,
      timers,
      globalVersion,
      cells,
      hub,
      approvals: this.approvals,
      scheduler,
      limits: agentLimits(options, this.codeMode),
      partFormat: partFormatOf(modelConfigs),
      requestTexts: new RequestTexts(),
      onDisposed: (id) => this.forget(id),
      reportDiagnostic: this.reportBackgroundError,
    };
    if (modelProxy !== undefined) this.agentDeps.modelProxy = modelProxy;
    this.agentDeps.hub.telemetry = telemetry;
    this.subagents = new SubagentRuntimeImpl(this, () => this.isClosed);
  }

  /** brood.scheduler: the admission scheduler's counters. */
  get scheduler(): SchedulerView {
    return this.agentDeps.scheduler;
  }

  get isClosed(): boolean {
    return this.closing !== undefined;
  }

  /** The runtime's own object for a parent; rejects foreign or disposed agents. */
  parentOf(agent: Agent): AgentImpl {
    const impl = agent === undefined || agent === null ? undefined : this.agents.get(agent.id);
    if (impl === undefined || impl !== agent) {
      if ((agent as Partial<Agent> | undefined)?.status === 'disposed')
        throw new BroodError('DISPOSED', `agent ${agent.id} is disposed`);
      throw new BroodError('INVALID_CONFIG', 'the parent is not a live agent of this brood runtime');
    }
    if (impl.isDisposed) throw new BroodError('DISPOSED', `agent ${impl.id} is disposed`);
    return impl;
  }

  /** Resolves a public Agent to the runtime's own object (undefined for foreign objects). */
  agentImpl(agent: Agent | undefined): AgentImpl | undefined {
    const impl = agent === undefined ? undefined : this.agents.get(agent.id);
    return impl === agent ? impl : undefined;
  }

  restore(sessionId: string, options: ResumeAgentOptions = {}): Promise<AgentImpl> {
    return restoreAgent(this, this.restoreHooks, sessionId, options);
  }

  private readonly restoreHooks: RestoreHooks = {
    runnerFor: (sessionId, descriptor) => this.restoredRunner(sessionId, descriptor),
    restored: (agent, descriptor) => {
      this.approvals.restoreRule(agent.id, descriptor.approvals);
      this.subagents.attachRestored(agent, descriptor);
    },
    // The background jobs its log announced: resumed, or known again with their logged result.
    prepare: (sessionId, events, context) =>
      prepareOwnedJobs(
        {
          store: this.store,
          jobs: this.subagents.jobs,
          restore: (id) => this.restore(id, context === undefined ? {} : { context }),
          report: this.reportBackgroundError,
        },
        sessionId,
        events,
      ),
  };

  /** This runtime's runner for a queueRunner config (one per config, connected lazily). */
  queueRunner(config: QueueRunnerConfig): DriverRunner {
    let runner = this.queueRunners.get(config);
    if (!runner) {
      runner = new QueueRunner(config, { models: this.modelConfigs, onDiagnostic: this.reportBackgroundError });
      this.queueRunners.set(config, runner);
    }
    return runner;
  }

  /** The runner a restored agent's descriptor names; undefined for the runtime's own. */
  private restoredRunner(sessionId: string, descriptor: Record<string, unknown>): DriverRunner | undefined {
    if (descriptor.runner === 'inline') return this.inlineRunner;
    if (descriptor.runner === 'external') return this.subagents.externalRunnerFor(sessionId, descriptor);
    if (descriptor.runner !== 'queue') return undefined;
    // A queued child's provider names the queue it runs on.
    const provider = typeof descriptor.provider === 'string' ? this.subagents.get(descriptor.provider) : undefined;
    return isQueueRunnerConfig(provider?.runner) ? this.queueRunner(provider.runner) : this.agentDeps.runner;
  }

  async createAgent(options: CreateAgentOptions): Promise<Agent> {
    this.assertOpen();
    await this.agentDeps.hub.telemetry?.ready();
    const parsed = parseConfig(createAgentOptionsSchema, options, 'createAgent options');
    throwIfAborted(parsed.signal, 'createAgent');
    const id = parsed.id ?? this.ids('agent');
    if (this.agents.has(id)) throw new BroodError('INVALID_CONFIG', `an agent with id '${id}' already exists`);
    const route = this.catalog.resolve(parsed.model);
    // A queue host reads apiKeyEnv in its own environment; local drivers read this process's.
    const providerConfig = this.catalog.config(route.provider);
    if (this.sendsFromHere && providerConfig !== undefined) checkApiKeyEnv(providerConfig);
    // A module-shape AI SDK model exists only in a thread: its module is checked here, not mid-turn.
    await checkAiSdkRoute(providerConfig, route.model);
    const depth = parsed.depth === undefined ? 0 : validateDelegationDepth(parsed.depth);
    const codeMode = parsed.codeMode ?? this.codeMode;
    // Sampled once, at creation: later preference changes never affect an existing session (SPEC §11.9).
    const modelSelectionEnabled = this.preferences?.get('subagent-model-selection.enabled') === true;
    const history = givenHistory(parsed.history, this.agentDeps, route.provider);
    const { agent, rollback } = composeAgent(this, {
      id,
      depth,
      parentId: undefined,
      route,
      codeMode,
      mode: 'top',
      modelSelectionEnabled,
      validateFilter: true,
      ...(parsed.maxSteps === undefined ? {} : { maxSteps: parsed.maxSteps }),
      ...(parsed.budget === undefined ? {} : { budget: parsed.budget }),
      ...(parsed.persona === undefined ? {} : { persona: parsed.persona }),
      ...(parsed.toolFilter === undefined ? {} : { toolFilter: parsed.toolFilter }),
      session: newSession(history),
    });
    let acquired = false;
    try {
      await this.store.create({ id, createdAt: this.agentDeps.now(), delegationDepth: depth, model: route });
      await this.store.acquire?.(id);
      acquired = true;
      // SessionStore has no delete: a signal that fired during create leaves only an empty header behind.
      throwIfAborted(parsed.signal, 'createAgent');
    } catch (error) {
      rollback();
      // The write lock this call took goes back: no agent holds it.
      if (acquired) await this.store.release?.(id).catch(() => undefined);
      throw error;
    }
    const descriptor = {
      model: route,
      codeMode,
      ...(parsed.maxSteps === undefined ? {} : { maxSteps: parsed.maxSteps }),
      ...(parsed.persona === undefined ? {} : { persona: parsed.persona }),
      ...(parsed.toolFilter === undefined ? {} : { toolFilter: parsed.toolFilter }),
      // Kept so a resumed agent's turns (a crash-interrupted one included) hold the same budget.
      ...(parsed.budget === undefined ? {} : { budget: { ...parsed.budget } }),
    };
    agent.writer.append([
      { type: 'agent/descriptor', data: descriptor },
      ...modelSelectionEvents(modelSelectionEnabled),
      ...(history.length === 0 ? [] : [historyEvent(history)]),
    ]);
    this.agents.set(id, agent);
    return agent;
  }

  async resumeAgent(sessionId: string, options: ResumeAgentOptions = {}): Promise<Agent> {
    this.assertOpen();
    const parsed = parseConfig(resumeAgentOptionsSchema, options ?? {}, 'resumeAgent options');
    // Checked here, not by the store, so every store gives the same answer (memorySessions would say NOT_RESUMABLE).
    if (!isValidSessionId(sessionId)) {
      throw new BroodError(
        'INVALID_CONFIG',
        `resumeAgent: session id ${describe(sessionId)} cannot name a session (letters, digits, _ . -, at most 128)`,
        { details: { id: describe(sessionId) } },
      );
    }
    throwIfAborted(parsed.signal, 'resumeAgent');
    checkContext(parsed.context, 'resumeAgent options');
    await this.agentDeps.hub.telemetry?.ready();
    // The parsed copy, not the host's object: its getters were read once, under parseConfig's guard.
    return this.agents.get(sessionId) ?? this.restore(sessionId, parsed as ResumeAgentOptions);
  }

  /** brood.usage(): what the sessions record, after every live agent's pending events are written. */
  async usage(agentId: string, options: unknown): Promise<UsageNode> {
    this.assertOpen();
    const { subtree = false } = parseConfig(usageOptionsSchema, options ?? {}, 'usage options');
    if (!isValidSessionId(agentId))
      throw new BroodError('INVALID_ARGS', `usage: ${describe(agentId)} cannot name a session`);
    await Promise.all([...this.agents.values()].map((agent) => agent.writer.flush().catch(() => undefined)));
    return readUsageTree(this.store, agentId, subtree);
  }

  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  assertOpen(): void {
    if (this.isClosed) throw new BroodError('DISPOSED', 'this brood runtime is closed');
  }

  /** Releases the pool's threads now; used when createBrood fails after the runner started. */
  abandon(): void {
    void this.agentDeps.runner.close();
    for (const runner of this.queueRunners.values()) void runner.close();
  }

  private forget(agentId: string): void {
    this.agents.delete(agentId);
    this.agentDeps.hub.telemetry?.forget(agentId);
    this.subagents.jobs.cancelOwnedBy(agentId);
    this.approvals.forget(agentId);
    this.agentDeps.modelProxy?.endOwner(agentId);
  }

  private async closeOnce(): Promise<void> {
    const disposed = Promise.all([...this.agents.values()].map((agent) => agent.dispose()));
    // Agents still waiting for admission are disposed now: nothing is admitted any more.
    this.agentDeps.scheduler.close();
    await disposed;
    await this.subagents.disposeProviders();
    this.agentDeps.hub.close();
    this.agentDeps.modelProxy?.close();
    await this.asyncPlugins.close();
    await Promise.all([
      this.agentDeps.runner.close(),
      this.inlineRunner.close(),
      ...[...this.queueRunners.values()].map((runner) => runner.close()),
    ]);
    const store = this.store as SessionStore & { close?: () => Promise<void> };
    await store.close?.();
  }
}

function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new BroodError('ABORTED', `${what} was aborted; nothing was created`);
}
