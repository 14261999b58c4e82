/**
 * The subagent runtime (SPEC §9): the provider registry with its synchronous mount hooks, the gate,
 * one-shot starts, continuable children (start, followup, interrupt) and lifecycle events.
 */

import type { AgentImpl } from '../agents/agent.js';
import { parseSendOptions } from '../agents/signals.js';
import { MISSING_CHILD, structuredTurn } from '../agents/structured-turn.js';
import { BroodError } from '../errors.js';
import { parseBudget } from '../scheduler/budget.js';
import { isEventOf } from '../sessions/event-types.js';
import type { Agent } from '../types.js';
import { type Disposer, makeDisposer } from '../util/disposer.js';
import { readUntrusted, snapshot } from '../util/untrusted.js';
import type { DriverRunner } from '../wire/runner.js';
import { completedTurns } from './completed-turns.js';
import type { SubagentCore } from './core.js';
import { recordDelegatingCall } from './delegating-call.js';
import { EXTERNAL_DRIVER, externalDriverOf, externalRestorerOf } from './external.js';
import { gate } from './gate.js';
import { Jobs } from './jobs.js';
import { ChildReports, isReportCap, isReportDelivery } from './report.js';
import { observeContinuable, startOneShot } from './runs.js';
import { publishChild } from './setup.js';
import type {
  ContinuableSpec,
  CreateChildOptions,
  MountHook,
  ProviderContext,
  ReportOptions,
  SubagentEventName,
  SubagentProvider,
  SubagentRun,
  SubagentRuntime,
  SubagentStartRequest,
} from './types.js';
import { validateContinuableSpec, validateProvider, validateStartRequest } from './validate.js';

export class SubagentRuntimeImpl implements SubagentRuntime {
  readonly jobs: Jobs;
  private readonly reports: ChildReports;
  private readonly providers = new Map<string, SubagentProvider>();
  private readonly hooks = new Set<MountHook>();

  constructor(
    private readonly core: SubagentCore,
    private readonly isClosed: () => boolean = () => false,
  ) {
    this.jobs = new Jobs(core);
    this.reports = new ChildReports(core, () => this.assertOpen());
  }

  private assertOpen(): void {
    if (this.isClosed()) throw new BroodError('DISPOSED', 'this brood runtime is closed');
  }

  register(provider: SubagentProvider): Disposer {
    this.assertOpen();
    readUntrusted('INVALID_CONFIG', 'a subagent provider', () => validateProvider(provider));
    if (this.providers.has(provider.name)) {
      throw new BroodError('DUPLICATE_PROVIDER', `a subagent provider named '${provider.name}' is already registered`, {
        details: { provider: provider.name },
      });
    }
    this.providers.set(provider.name, provider);
    try {
      mountAll([...this.hooks], provider);
    } catch (error) {
      this.providers.delete(provider.name); // the mount failed: roll this registration back
      throw error;
    }
    this.core.events.emit('provider-added', { name: provider.name });
    return makeDisposer(() => {
      if (this.providers.get(provider.name) !== provider) return;
      this.providers.delete(provider.name);
      for (const hook of this.hooks) contain(() => hook.removed(provider));
      void Promise.resolve()
        .then(() => provider.dispose?.())
        .catch(() => undefined);
      this.core.events.emit('provider-removed', { name: provider.name });
    });
  }

  /** Replays `added` for the providers registered so far; if one throws, nothing stays installed. */
  addMountHook(hook: MountHook): Disposer {
    const mounted: SubagentProvider[] = [];
    try {
      for (const provider of this.providers.values()) {
        hook.added(provider);
        mounted.push(provider);
      }
    } catch (error) {
      for (const provider of mounted.reverse()) contain(() => hook.removed(provider));
      throw error;
    }
    this.hooks.add(hook);
    return makeDisposer(() => this.hooks.delete(hook));
  }

  list(): string[] {
    return [...this.providers.keys()];
  }

  get(name: string): SubagentProvider | undefined {
    return this.providers.get(name);
  }

  on(event: SubagentEventName, fn: (info: never) => void): Disposer {
    if (!['start', 'end', 'provider-added', 'provider-removed'].includes(event)) {
      throw new BroodError('INVALID_CONFIG', `unknown subagent event '${String(event)}'`);
    }
    return this.core.events.on(event, fn as (info: unknown) => void);
  }

  async start(providerName: string, untrusted: SubagentStartRequest): Promise<SubagentRun> {
    this.assertOpen();
    // The host's request is copied (its data; the parent and signal by reference) and checked under
    // guard: a getter or proxy trap that throws is INVALID_ARGS. Providers get the copy.
    const request = snapshot('INVALID_ARGS', 'a start request', untrusted);
    // Read now, synchronously: the tool call that is starting this child (its spans nest under it).
    this.core.agentDeps.hub.telemetry?.startedBy(request);
    recordDelegatingCall(request, (request.parent as Agent | undefined)?.id);
    const provider = readUntrusted('INVALID_ARGS', 'a start request', () => {
      validateStartRequest(request, true);
      const passed = gate(this.providers, providerName, request);
      this.core.parentOf(request.parent);
      return passed;
    });
    return provider.start(request, this.contextFor(provider.name));
  }

  async startContinuable(untrusted: ContinuableSpec): Promise<{ childId: string; messageId: string }> {
    this.assertOpen();
    const { telemetry } = this.core.agentDeps.hub;
    const startedBy = telemetry?.runningCall(); // read now, synchronously: the child's runs link to it
    const spec = snapshot('INVALID_CONFIG', 'a startContinuable spec', untrusted);
    validateContinuableSpec(spec);
    const request: SubagentStartRequest = { ...spec.request, label: spec.label, signal: spec.signal };
    recordDelegatingCall(request, (request.parent as Agent | undefined)?.id);
    validateStartRequest(request, false);
    const budget = parseBudget(request.budget, 'startContinuable request.budget');
    if (budget === undefined) delete request.budget;
    else request.budget = budget;
    const provider = readUntrusted('INVALID_ARGS', 'a start request', () =>
      gate(this.providers, spec.provider, request),
    );
    if (typeof provider.prepareContinuable !== 'function') {
      throw new BroodError(
        'UNSUPPORTED_CAPABILITY',
        `subagent provider '${provider.name}' does not support 'continuable' children`,
        { details: { provider: provider.name, capability: 'continuable' } },
      );
    }
    const parent = this.core.parentOf(request.parent);
    const childId = this.core.ids('sub');
    const context = this.contextFor(provider.name);
    const prepared = await provider.prepareContinuable({ childId, parent, signal: spec.signal, context } as Parameters<
      NonNullable<SubagentProvider['prepareContinuable']>
    >[0]);
    if (spec.signal.aborted) throw new BroodError('ABORTED', 'the continuable start was cancelled');
    const external = externalDriverOf(prepared);
    const child = await publishChild(this.core, {
      request,
      provider: provider.name,
      mode: 'continuable',
      childId,
      ...(prepared?.seed ? { seed: prepared.seed } : {}),
      ...(prepared?.runner ? { runner: prepared.runner } : {}),
      ...(prepared?.setup ? { setup: prepared.setup } : {}),
      ...(external ? { [EXTERNAL_DRIVER]: external } : {}),
      ...(spec.reportDelivery === undefined ? {} : { reportDelivery: spec.reportDelivery }),
      ...(spec.maxReportBytes === undefined ? {} : { maxReportBytes: spec.maxReportBytes }),
      install: (agent) => this.reports.install(agent, spec.reportDelivery, spec.maxReportBytes),
    });
    observeContinuable(this.core, provider.name, child);
    telemetry?.wokenBy(childId, startedBy);
    const accepted = child.accept({ message: request.prompt, source: 'parent', context: request.context });
    // Its own budget (the ceiling) applies to each of its turns; this one also gets at most what the
    // parent's turn has left, and spends from it.
    parent.governor.delegate(child.governor, accepted.id, undefined);
    await accepted.durable;
    return { childId, messageId: accepted.id };
  }

  async followup(
    parent: Agent,
    childId: string,
    message: string,
    opts: { signal: AbortSignal; context?: unknown },
  ): Promise<string> {
    this.assertOpen();
    const read = readUntrusted('INVALID_ARGS', 'followup options', () => ({ ...opts }));
    const { signal } = parseSendOptions({ signal: read.signal });
    const { context } = read;
    const { telemetry } = this.core.agentDeps.hub;
    const sentBy = telemetry?.runningCall(); // read now, synchronously: the run this wakes links to it
    const parentImpl = readUntrusted('INVALID_ARGS', 'followup parent', () => this.core.parentOf(parent));
    const child = this.core.agents.get(childId) ?? (await this.restoreContinuable(parentImpl, childId));
    authorize(child, parentImpl);
    telemetry?.wokenBy(child.id, sentBy);
    const accepted = child.accept({ message, source: 'parent', signal, context });
    // Like its first turn: within its own ceiling and what the sending turn has left.
    parentImpl.governor.delegate(child.governor, accepted.id, undefined);
    await accepted.durable;
    return accepted.id;
  }

  reportFrom(childId: string, output: string, options?: ReportOptions): Promise<string> {
    return this.reports.reportFrom(childId, output, options);
  }

  interrupt(childId: string, by: Agent): void {
    this.assertOpen();
    const child = this.core.agents.get(childId);
    if (!child) throw notResumable(childId);
    authorize(child, this.core.parentOf(by));
    child.cancel('parent');
  }

  /** Called for every agent rebuilt from a session: a continuable child gets its run observer and `report` back. */
  attachRestored(agent: AgentImpl, descriptor: Record<string, unknown>): void {
    if (agent.mode !== 'continuable') return;
    const provider = typeof descriptor.provider === 'string' ? descriptor.provider : 'spawn';
    observeContinuable(this.core, provider, agent);
    const delivery = isReportDelivery(descriptor.reportDelivery) ? descriptor.reportDelivery : undefined;
    // A cap that is not one falls back to the default: never to no cap.
    const cap = isReportCap(descriptor.maxReportBytes) ? descriptor.maxReportBytes : undefined;
    this.reports.install(agent, delivery, cap);
  }

  /** The driver of a restored child that an out-of-process provider ran (its descriptor says `runner: 'external'`). */
  externalRunnerFor(sessionId: string, descriptor: Record<string, unknown>): DriverRunner {
    const name = typeof descriptor.provider === 'string' ? descriptor.provider : '';
    const restorer = externalRestorerOf(this.providers.get(name));
    if (!restorer) {
      throw new BroodError(
        'NOT_RESUMABLE',
        `subagent ${sessionId} ran on the out-of-process provider '${name}', which is not registered here`,
        { details: { childId: sessionId, provider: name } },
      );
    }
    return restorer.restoreDriver(sessionId, descriptor);
  }

  /** Releases what providers hold outside this process (agent processes); part of brood.close(). */
  async disposeProviders(): Promise<void> {
    await Promise.all(
      [...this.providers.values()].map((provider) =>
        Promise.resolve()
          .then(() => provider.dispose?.())
          .catch(() => undefined),
      ),
    );
  }

  private contextFor(provider: string): ProviderContext {
    return {
      provider,
      createChild: (options) => this.createChild(provider, options),
      completedTurns: (parent) => completedTurns(this.core, this.core.parentOf(parent)),
    };
  }

  private async createChild(provider: string, options: CreateChildOptions): Promise<SubagentRun> {
    validateStartRequest(options.request, true);
    // A provider's (or a host's) budget is checked like every budget: a bad one starts nothing.
    parseBudget(options.request.budget, 'start request budget');
    // Built before anything is created: a schema no turn tool can take (INVALID_ARGS) leaves nothing behind.
    const { outputSchema } = options.request;
    const structured = outputSchema === undefined ? undefined : structuredTurn(outputSchema, MISSING_CHILD);
    // Past limits.queue.max the child is never created: the delegation is an errored result (QUEUE_FULL).
    const { scheduler } = this.core.agentDeps;
    if (scheduler.refusesTurn()) throw scheduler.queueFullError();
    const child = await publishChild(this.core, { ...options, provider, mode: 'one-shot' });
    return startOneShot(this.core, provider, child, options.request, structured);
  }

  /** Cold resume of a continuable child (after a restart): authorised against its stored header first. */
  private async restoreContinuable(parent: AgentImpl, childId: string): Promise<AgentImpl> {
    const { header, events } = await this.core.store.read(childId);
    if (
      header.origin !== 'subagent' ||
      !events.some((e) => isEventOf(e, 'subagent/descriptor') && e.data.mode === 'continuable')
    ) {
      throw notResumable(childId);
    }
    if (header.parentSession !== parent.id) throw unauthorized(childId, parent.id);
    return this.core.restore(childId);
  }
}

function authorize(child: AgentImpl, parent: AgentImpl): void {
  if (child.mode !== 'continuable') throw notResumable(child.id);
  if (child.parentId !== parent.id) throw unauthorized(child.id, parent.id);
}

function notResumable(childId: string): BroodError {
  return new BroodError('NOT_RESUMABLE', `'${childId}' is not a continuable subagent of this runtime`, {
    details: { childId },
  });
}

function unauthorized(childId: string, callerId: string): BroodError {
  return new BroodError(
    'UNAUTHORIZED',
    `only the direct parent may message subagent ${childId} (caller: ${callerId})`,
    { details: { childId, callerId } },
  );
}

function mountAll(hooks: MountHook[], provider: SubagentProvider): void {
  const mounted: MountHook[] = [];
  try {
    for (const hook of hooks) {
      hook.added(provider);
      mounted.push(hook);
    }
  } catch (error) {
    for (const hook of mounted.reverse()) contain(() => hook.removed(provider));
    throw error;
  }
}

function contain(fn: () => void): void {
  try {
    fn();
  } catch {
    // Unmounting must reach every hook even if one fails.
  }
}
