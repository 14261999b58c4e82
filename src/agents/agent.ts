/**
 * A parent-side agent: its session, inbox, scopes and the activation (driver task) that serves its
 * turns. The driver does the work in a worker; everything that is policy — which message a turn
 * claims, what the model may see, tool execution, persistence — happens here through the gateway.
 */

import type { z } from 'zod';
import { BroodError, errorMessage } from '../errors.js';
import type { ChatMessage } from '../models/types.js';
import type { TurnLease } from '../scheduler/turn-lease.js';
import type { MessageDelivery } from '../sessions/event-types.js';
import { SessionWriter } from '../sessions/session-writer.js';
import type {
  AgentEventsOptions,
  AgentStatus,
  AgentStream,
  BroodEvent,
  CodeMode,
  MessageInput,
  ModelRoute,
  PromptRegistry,
  RunOptions,
  SendOptions,
  ToolRegistry,
  TurnResult,
  Usage,
  UsageNode,
} from '../types.js';
import { guardDisposed } from '../util/guard.js';
import type { DriverPlan } from '../wire/protocol.js';
import type { Activation, ActivationEnd } from '../wire/runner.js';
import type { AgentCells } from '../wire/version-cell.js';
import { type IncomingMessage, recordAndQueue } from './accept.js';
import { armCancelGrace } from './cancel-grace.js';
import { CodePrograms } from './code-calls.js';
import { createGateway } from './gateway.js';
import { TurnGovernor } from './governor.js';
import { Inbox, restoredMessage } from './inbox.js';
import type { OpenTurn, ResumeInputs } from './open-turn.js';
import type { GatewayAgent } from './parent-tools.js';
import { PendingActivation } from './pending-activation.js';
import { admitFirstRequest, planActivation, resumePlan, viewOrNull } from './plan.js';
import { sendMessage, startRun } from './run-entry.js';
import { disposedError } from './signals.js';
import { closeStoppedTurn, disposedResult } from './stopped-turn.js';
import { startStream } from './stream/start.js';
import { type CurrentTurn, TurnLedger } from './turns.js';
import type { ActivationObserver, AgentDeps, AgentInit } from './types.js';

export type { ActivationObserver } from './types.js';

export class AgentImpl implements GatewayAgent {
  readonly id: string;
  readonly depth: number;
  readonly parentId: string | undefined;
  /** The guarded registries, made when first read: most children never read them. */
  private guardedTools: ToolRegistry | undefined;
  private guardedPrompt: PromptRegistry | undefined;
  readonly codeMode: CodeMode;
  readonly cells: AgentCells;
  readonly writer: SessionWriter;
  readonly inbox = new Inbox();
  /** Turn state: changed only through the ledger's transitions (claim, mirror, finish). */
  readonly turns: TurnLedger;
  readonly route: ModelRoute;
  readonly maxSteps: number;
  /** Budgets of this agent's turns (createAgent, run options, a parent's delegation). */
  readonly governor: TurnGovernor;
  /** Told when the agent goes from idle to busy and back (each busy period of a continuable child is a run). */
  private observer: ActivationObserver | undefined;
  private activation: Activation | undefined;
  private disposed = false;
  /** True from the first activation of a busy period until the agent is idle again. */
  private busy = false;
  private disposing: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];
  /** The calls from inside this agent's run_code programs (bounded, ended with their program). */
  private readonly programs = new CodePrograms(this);

  constructor(
    readonly init: AgentInit,
    readonly deps: AgentDeps,
  ) {
    this.id = init.id;
    this.depth = init.depth;
    this.parentId = init.parentId;
    this.route = init.route;
    this.maxSteps = init.maxSteps;
    this.codeMode = init.codeMode;
    this.cells = deps.cells.forAgent();
    this.writer = new SessionWriter(deps.store, init.id, init.nextSeq, deps.now);
    this.governor = new TurnGovernor(this, deps, init.budget);
    this.turns = new TurnLedger({
      governor: this.governor,
      writer: this.writer,
      inbox: this.inbox,
      history: init.history,
      lastTurn: init.lastTurn,
      lastRequestRoute: init.lastRequestRoute,
      owner: this,
    });
    this.writer.observe = (stamped, meta) => deps.hub.logged(this, stamped, meta);
    // The tool scope bumps cells.view on its own and global tool changes (composeAgent's ScopeOwner),
    // agent-layer prompt changes through the prompt scope; global prompt changes bump the global cell.
    for (const message of init.unclaimed) this.inbox.push(restoredMessage(message));
  }

  get tools(): ToolRegistry {
    this.guardedTools ??= guardDisposed(this.init.tools.registry, () => this.disposed, `agent ${this.id}`, ['execute']);
    return this.guardedTools;
  }

  get prompt(): PromptRegistry {
    this.guardedPrompt ??= guardDisposed(this.init.prompt.registry, () => this.disposed, `agent ${this.id}`, []);
    return this.guardedPrompt;
  }

  /** LedgerOwner (with isDisposed): what the turn ledger asks of its agent. */
  bumpView(): void {
    this.cells.view.bump();
  }

  stepPending(): void {
    this.cells.step.bump();
  }

  traceHeaders(): Record<string, string> | undefined {
    return this.deps.hub.telemetry?.traceHeaders(this.id);
  }

  /** What the running activation holds of the scheduler (its owner is the governor). */
  get lease(): TurnLease | undefined {
    return this.governor.lease;
  }

  get status(): AgentStatus {
    if (this.disposed) return 'disposed';
    return this.activation === undefined ? 'idle' : 'running';
  }

  async send(message: MessageInput, opts?: SendOptions): Promise<string> {
    return sendMessage(this, message, opts);
  }

  run<S extends z.ZodType>(
    message: MessageInput,
    opts: RunOptions & { outputSchema: S },
  ): Promise<TurnResult<z.output<S>>>;
  run(message: MessageInput, opts?: RunOptions): Promise<TurnResult>;
  async run(message: MessageInput, opts?: RunOptions): Promise<TurnResult> {
    return startRun(this, message, opts).result;
  }

  stream<S extends z.ZodType>(input: MessageInput, opts: RunOptions & { outputSchema: S }): AgentStream<z.output<S>>;
  stream(input: MessageInput, opts?: RunOptions): AgentStream;
  stream(input: MessageInput, opts?: RunOptions): AgentStream {
    return startStream(this, input, opts);
  }

  /** What run() and stream() share (src/agents/run-entry.ts). */
  startRun(message: MessageInput, opts: RunOptions | undefined): { messageId: string; result: Promise<TurnResult> } {
    return startRun(this, message, opts);
  }

  events(options?: AgentEventsOptions): AsyncIterable<BroodEvent> {
    if (this.disposed) throw disposedError(this.id);
    return this.deps.hub.subscribe(this.id, options);
  }

  /**
   * Accepts a message from any source (user, parent, notices, reports). `durable` resolves once its
   * `user/message` event is flushed; only then can a turn claim it and only then does the agent wake
   * (a `quiet` report never wakes it; a `next-step` one is also offered to the running turn's next step).
   */
  accept(incoming: IncomingMessage): { id: string; durable: Promise<void> } {
    const id = this.deps.ids('msg');
    if (this.disposed) return { id, durable: Promise.reject(disposedError(this.id)) };
    if (incoming.source === 'user') this.deps.hub.telemetry?.hostMessage(this, id);
    const durable = recordAndQueue(this.writer, this.inbox, id, incoming);
    const delivery = incoming.report?.delivery;
    return { id, durable: durable.then(() => this.delivered(delivery)) };
  }

  private delivered(delivery: MessageDelivery | undefined): void {
    if (delivery === 'quiet') return;
    if (delivery === 'next-step') this.cells.step.bump();
    this.wake();
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** The parent's mirror of the model history. */
  get history(): readonly ChatMessage[] {
    return this.turns.history;
  }

  get current(): CurrentTurn | undefined {
    return this.turns.current;
  }

  get lastTurn(): number {
    return this.turns.lastTurn;
  }

  get lastRequestRoute(): ModelRoute | undefined {
    return this.turns.lastRequestRoute;
  }

  get lastResult(): TurnResult | undefined {
    return this.turns.lastResult;
  }

  /** One observer of busy periods (a continuable child's run bookkeeping). */
  observe(observer: ActivationObserver): void {
    this.observer = observer;
  }

  whenIdle(): Promise<void> {
    if (this.disposed) return Promise.reject(disposedError(this.id));
    if (this.activation === undefined && !this.inbox.claimable) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  cancel(_cause: 'user' | 'parent' = 'user'): void {
    if (this.disposed) throw disposedError(this.id);
    this.cancelCurrentTurn();
  }

  dispose(): Promise<void> {
    this.disposing ??= this.disposeOnce();
    return this.disposing;
  }

  /** Adds a foreground child's usage to the running turn (rolled up exactly once, at turn end). */
  addChildUsage(usage: Usage, tree?: UsageNode): void {
    this.turns.addChildUsage(usage, tree);
  }

  get mode(): AgentInit['mode'] {
    return this.init.mode;
  }

  get modelSelectionEnabled(): boolean {
    return this.init.modelSelectionEnabled;
  }

  /** Starts an activation if there is work and none is running. */
  wake(): void {
    if (this.disposed || this.activation !== undefined || !this.inbox.claimable) return;
    if (!this.busy) {
      this.busy = true;
      this.observer?.activationStarted();
    }
    // The plan is taken before the claim: the claimed message reaches the driver as `firstMessage`.
    const lease = this.governor.openLease();
    const plan = planActivation(this);
    // Admitted before the claim (limits.agents): a queued agent's turn has not started.
    const ready = this.governor
      .admitTurn(lease)
      .then(() => this.turns.claimNext())
      .then((first) => {
        if (first === null) return null;
        // A structured turn presents its own tool: the view taken before the claim lacks it.
        if (this.current?.structured) plan.view = viewOrNull(this);
        admitFirstRequest(this, plan);
        return { ...plan, firstMessage: first };
      });
    this.launch(ready);
  }

  /** Holds the activation slot while `ready` admits and plans the turn, then starts its driver (null: no work). */
  private launch(ready: Promise<DriverPlan | null>, started?: () => void): void {
    const pending = new PendingActivation();
    this.activation = pending;
    this.follow(pending);
    ready.then(
      (plan) => {
        if (plan === null) return pending.finish({ kind: 'finished' });
        pending.attach(this.deps.runner.activate(plan, createGateway(this, this.programs)));
        started?.();
      },
      (error: unknown) => pending.finish({ kind: 'failed', stopReason: 'error', diagnostic: errorMessage(error) }),
    );
  }

  private startActivation(plan: DriverPlan): void {
    this.activation = this.deps.runner.activate(plan, createGateway(this, this.programs));
    this.follow(this.activation);
  }

  /** Its own method: a closure made where the plan is in scope would keep the plan while the activation runs. */
  private follow(activation: Activation): void {
    void activation.done.then((end) => this.activationEnded(end));
  }

  private async activationEnded(end: ActivationEnd): Promise<void> {
    // Its driver's programs died with it (a recovered turn runs its run_code again).
    this.programs.endAll();
    if (end.kind === 'recover' && !this.disposed) return this.recover();
    this.governor.releaseLease();
    const turn = this.current;
    // The driver stopped mid-turn (its thread died, or it was stopped by force).
    if (turn) await closeStoppedTurn(this, turn, end);
    this.activation = undefined;
    if (this.inbox.claimable && !this.disposed) return this.wake();
    if (this.busy) {
      this.busy = false;
      this.observer?.activationEnded(this.lastResult);
    }
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * Continues the turn a crash left open (restore, src/agents/open-turn.ts) with the recovery plan a
   * thread death uses: nothing answered is asked again, unanswered calls are issued again and the
   * parent decides what each gets (src/agents/resumed-calls.ts). Settles with that turn's result.
   */
  continueOpenTurn(open: OpenTurn, inputs: ResumeInputs): Promise<TurnResult> {
    const result = this.inbox.result(open.messageId);
    const turn = this.turns.resumeOpen(open, inputs);
    this.busy = true;
    this.observer?.activationStarted();
    const lease = this.governor.openLease();
    // The children it had finished count before its driver starts again (usage, token budget).
    const ready = Promise.all([this.governor.admitTurn(lease), inputs.finished]).then(([, finished]) => {
      if (finished !== undefined) this.turns.addFinishedChildren(turn, finished);
      return resumePlan(this, turn);
    });
    // What the log shows was spent counts: a budget already used up ends the turn now.
    this.launch(ready, () => this.governor.progressed(turn, true));
    return result;
  }

  /** The thread this driver shared died because of another driver: it continues on a healthy one. */
  private recover(): void {
    const turn = this.current;
    this.startActivation(resumePlan(this, turn));
    // A cancelled turn stays cancelled on its new thread: the resumed driver begins it aborted.
    if (turn?.controller.aborted) this.activation?.cancel(turn.turn);
  }

  /** Cancels the turn of one message: the running one now, a queued one when it is claimed. */
  abortMessage(messageId: string): void {
    if (this.current?.messageId === messageId) this.cancelCurrentTurn();
    // A still-queued message is claimed later and sees its aborted signal (ends `aborted`, no model call).
  }

  /** The running turn spent its budget (see TurnGovernor): it ends before its next request. */
  cancelForBudget(): void {
    if (!this.disposed) this.cancelCurrentTurn();
  }

  private cancelCurrentTurn(): void {
    const turn = this.current;
    if (!turn || turn.controller.aborted) return;
    turn.controller.abort(new BroodError('ABORTED', 'the turn was cancelled'));
    this.activation?.cancel(turn.turn);
    // See cancel-grace.ts: the driver is stopped by force only if it, not a parent-side call, holds the turn.
    armCancelGrace(
      turn,
      this.deps.limits.cancelGraceMs,
      {
        isCurrent: (candidate) => this.current === candidate,
        forceStop: (reason) => this.activation?.forceStop(reason),
      },
      this.deps.timers,
    );
  }

  /** Who this agent is in a usage tree: its label and the route it requested last. */
  usageIdentity(): Pick<UsageNode, 'agentId' | 'label' | 'provider' | 'model'> {
    const route = this.turns.lastRequestRoute ?? this.route;
    const label = this.init.label === undefined ? {} : { label: this.init.label };
    return { agentId: this.id, ...label, provider: route.provider, model: route.model };
  }

  private async disposeOnce(): Promise<void> {
    if (this.disposed) return;
    this.cancelCurrentTurn();
    this.disposed = true;
    // Recorded before the flush below: a request no one can answer any more is expired, not left listed.
    this.deps.approvals.expireAllOf(this.id);
    this.governor.releaseLease();
    this.inbox.settleQueued(disposedResult(this.usageIdentity()));
    if (this.activation) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.writer.flush().catch(() => undefined);
    // The session's single-writer lock goes with the agent: another runtime may now resume it.
    await this.deps.store.release?.(this.id).catch(() => undefined);
    this.init.tools.dispose();
    this.init.prompt.dispose();
    // No driver of this agent runs any more (awaited above): its cells may serve the next agents.
    this.cells.release();
    this.deps.onDisposed(this.id);
    this.deps.hub.agentDisposed(this.id);
  }
}
