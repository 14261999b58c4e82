/**
 * An agent's share of governed fan-out: the budget of each of its turns (the run's own, tightened by
 * the agent's), the watch that ends a turn 'budget', and the lease of its running activation — the
 * turn slot the runtime's scheduler admits before the activation runs and the model request in
 * flight. The governor is the lease's one owner: opened when an activation starts, released when it
 * ends or the agent is disposed. Kept out of the agent so the agent only calls in.
 */
import { baseOf } from '../events/from-log.js';
import type { EventHub } from '../events/hub.js';
import { type BudgetExceeded, BudgetWatch, budgetDiagnostic, parseBudget, tighten } from '../scheduler/budget.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { TokenAccount } from '../scheduler/token-account.js';
import type { TurnLease } from '../scheduler/turn-lease.js';
import type { Budget } from '../scheduler/types.js';
import type { StopReason, Usage } from '../types.js';
import type { Inbox } from './inbox.js';
import type { CurrentTurn, TurnHooks } from './turns.js';

export interface GovernedAgent {
  readonly id: string;
  readonly depth: number;
  readonly parentId: string | undefined;
  readonly current: CurrentTurn | undefined;
  readonly inbox: Pick<Inbox, 'refuseClaimable'>;
  /** Ends the running turn (its driver stops before its next request). */
  cancelForBudget(): void;
}

export interface GovernorDeps {
  scheduler: Scheduler;
  hub: EventHub;
  now: () => number;
}

export class TurnGovernor implements TurnHooks {
  /**
   * Budgets of accepted messages, when they were accepted and the token account of the turn that sent
   * them (a parent's delegation), by message id, until their turn starts. Made when a message needs
   * it and let go once empty: a delegated child's one message starts at once.
   */
  private pending:
    | Map<string, { budget: Budget | undefined; acceptedAt: number; above: TokenAccount | undefined }>
    | undefined;
  /**
   * Made with the first watch: most agents never run under a budget, and a parked child would
   * otherwise keep an empty weak table for as long as it lives (one each of 100,000 parked children).
   */
  private watches: WeakMap<CurrentTurn, BudgetWatch> | undefined;
  private open: TurnLease | undefined;

  constructor(
    private readonly agent: GovernedAgent,
    private readonly deps: GovernorDeps,
    private readonly own: Budget | undefined,
  ) {}

  /**
   * Before a top-level run is accepted: its budget, parsed (INVALID_CONFIG), and QUEUE_FULL when its
   * turn would queue past limits.queue.max.
   */
  admissibleRun(budget: unknown): Budget | undefined {
    const parsed = parseBudget(budget, 'run options budget');
    if (this.deps.scheduler.refusesTurn(this.open)) throw this.deps.scheduler.queueFullError();
    return parsed;
  }

  /** The running activation's lease (undefined while the agent is idle). */
  get lease(): TurnLease | undefined {
    return this.open;
  }

  /** An activation starts: it holds what the scheduler admits it through a new lease. */
  openLease(): TurnLease {
    this.open = this.deps.scheduler.openLease(this.agent);
    return this.open;
  }

  /**
   * Before the activation runs (limits.agents): resolves once its lease holds a turn slot. Past
   * queue.max its waiting messages are refused QUEUE_FULL (a child's delegation becomes an errored
   * result with that code) and the activation ends with nothing to claim.
   */
  async admitTurn(lease: TurnLease): Promise<void> {
    try {
      await lease.admitTurn();
    } catch (error) {
      this.agent.inbox.refuseClaimable(error);
    }
  }

  /**
   * The activation ended (not to be resumed on another thread) or the agent is disposed: its slot,
   * its model request and its credit cell are freed, and whatever it still waited for is withdrawn.
   */
  releaseLease(): void {
    this.open?.release();
    this.open = undefined;
  }

  /**
   * A message was accepted (run() called, or a parent delegated), with its own budget: its wall time
   * counts from now, time spent queued for its turn included. `above` is the token account of the
   * parent's turn that delegated it: the turn it starts spends that turn's tokens too.
   */
  forMessage(messageId: string, budget: Budget | undefined, above?: TokenAccount): void {
    if (budget === undefined && this.own === undefined && above === undefined) return;
    this.pending ??= new Map();
    this.pending.set(messageId, { budget, acceptedAt: this.deps.now(), above });
  }

  /** A parent delegates from its running turn: the child's messages, their budget and token account. */
  delegate(child: TurnGovernor, messageId: string, ceiling: Budget | undefined): void {
    child.forMessage(messageId, tighten(ceiling, this.remainder()), this.account());
  }

  budgetOf(messageId: string): Budget | undefined {
    return this.pending?.get(messageId)?.budget;
  }

  /** A turn claimed its message: its watch starts, its wall time counted from the message's acceptance. */
  turnStarted(turn: CurrentTurn): void {
    const accepted = this.pending?.get(turn.messageId);
    this.pending?.delete(turn.messageId);
    if (this.pending?.size === 0) this.pending = undefined;
    const budget = tighten(this.own, accepted?.budget);
    const above = accepted?.above;
    if (budget === undefined && above === undefined) return;
    const onExceeded = (exceeded: BudgetExceeded): void => this.exceeded(exceeded);
    const watch = new BudgetWatch(budget ?? {}, this.deps.now, onExceeded, accepted?.acceptedAt, above);
    this.watches ??= new WeakMap();
    this.watches.set(turn, watch);
    turn.cleanup.push(() => watch.stop());
  }

  chargeChildren(turn: CurrentTurn, tokens: number): void {
    this.watches?.get(turn)?.account.charge(tokens);
  }

  /** A model response or tool result of the running turn: idle time restarts, tokens are checked. */
  progressed(turn: CurrentTurn, withTokens: boolean): void {
    const watch = this.watches?.get(turn);
    if (watch === undefined) return;
    watch.activity();
    // Only the turn's own usage: its children's responses were charged, as they came, to their own
    // accounts below this one (turn.childUsage repeats them when they settle).
    if (withTokens) watch.tokens(totalOf(turn.usage));
  }

  /** What a child of the running turn may use at most (undefined: no budget runs). */
  remainder(): Budget | undefined {
    const turn = this.agent.current;
    return turn === undefined ? undefined : this.watches?.get(turn)?.remainder();
  }

  /** The running turn's token account, which its children's turns charge too (undefined: no budget runs). */
  account(): TokenAccount | undefined {
    const turn = this.agent.current;
    return turn === undefined ? undefined : this.watches?.get(turn)?.account;
  }

  /**
   * A turn that ends after its budget was spent ends 'budget', whatever its driver reported. When the
   * response that spent it was the final answer (it asked for no tool), that answer is the output and
   * the diagnostic says so, next to the budget it crossed.
   */
  outcome(turn: CurrentTurn, stopReason: StopReason, diagnostic: string | undefined): [StopReason, string | undefined] {
    const spent = this.watches?.get(turn)?.exceededBy;
    if (spent === undefined) return [stopReason, diagnostic];
    const answered = turn.lastFinish === 'stop' && turn.output !== '';
    return ['budget', budgetDiagnostic(spent, answered)];
  }

  private exceeded(exceeded: BudgetExceeded): void {
    const { hub } = this.deps;
    if (hub.active && hub.isPublished(this.agent))
      hub.publish({ ...baseOf(this.agent, hub.now()), type: 'budget-exceeded', ...exceeded });
    this.agent.cancelForBudget();
  }
}

function totalOf(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens;
}
