/**
 * Budgets of a run: the schema (INVALID_CONFIG at every door), how they combine down the tree (only
 * ever tighter) and the watch that ends a turn when one is spent.
 */
import { z } from 'zod';
import { parseConfig } from '../util/untrusted.js';
import { TokenAccount } from './token-account.js';
import type { Budget, BudgetKind } from './types.js';

/** A budget from the host (createAgent, run options, subagentTool): INVALID_CONFIG naming the key. */
export function parseBudget(value: unknown, where: string): Budget | undefined {
  if (value === undefined) return undefined;
  return parseConfig(budgetSchema, value, where);
}

/** Node.js timers take a signed 32-bit delay (the same bound as every millisecond option, src/config.ts). */
const MAX_BUDGET_MS = 2 ** 31 - 1;
const budgetMs = z.number().finite().positive().max(MAX_BUDGET_MS, `at most ${MAX_BUDGET_MS} ms`);

/** A run's budget (createAgent, run options, subagentTool): every value positive and finite. */
export const budgetSchema = z.strictObject({
  timeoutMs: budgetMs.optional(),
  idleTimeoutMs: budgetMs.optional(),
  maxTokens: z.number().finite().positive().optional(),
});

const KEYS = ['timeoutMs', 'idleTimeoutMs', 'maxTokens'] as const;

/** The smaller of each value: a child's budget is its own and its parent's remainder, whichever is tighter. */
export function tighten(...budgets: (Budget | undefined)[]): Budget | undefined {
  const merged: Budget = {};
  for (const budget of budgets) {
    if (budget === undefined) continue;
    for (const key of KEYS) {
      const value = budget[key];
      if (value !== undefined) merged[key] = Math.min(merged[key] ?? value, value);
    }
  }
  return Object.keys(merged).length === 0 ? undefined : merged;
}

export interface BudgetExceeded {
  budget: BudgetKind;
  limit: number;
  used: number;
}

/** The Budget key of each kind, which the diagnostic names. */
const OPTION_OF: Record<BudgetKind, keyof Budget> = {
  timeout: 'timeoutMs',
  idle: 'idleTimeoutMs',
  tokens: 'maxTokens',
};

/** What a budget diagnostic adds when the turn's final answer was in before the budget ended it. */
export const FINAL_ANSWER_KEPT = 'its final answer was already in and is the output';

/**
 * What the turn's diagnostic says about the budget that ended it: its kind, the use, the limit and
 * the option that set it; `answered` when the response that spent it (or one before) was the final answer.
 */
export function budgetDiagnostic(exceeded: BudgetExceeded, answered = false): string {
  const unit = exceeded.budget === 'tokens' ? ' tokens' : ' ms';
  const use = `used ${Math.round(exceeded.used)}${unit} of ${exceeded.limit}${unit} (${OPTION_OF[exceeded.budget]})`;
  return `the run hit its budget (${exceeded.budget}): ${use}${answered ? `; ${FINAL_ANSWER_KEPT}` : ''}`;
}

/**
 * One turn's budget: wall time from the run's start (its message accepted, queueing included), idle time since the last model response or tool
 * result, and tokens as responses report them, through the turn's TokenAccount: its own responses are
 * charged here, its children's to their accounts below it, and an account above it (the turn that
 * started this one) may be spent by a sibling. `exceeded` is called once, with the first budget spent.
 */
export class BudgetWatch {
  /** The turn's tokens, in the tree of the turn that started it (`above`). */
  readonly account: TokenAccount;
  private readonly startedAt: number;
  private lastActivity: number;
  private wallTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private ownCharged = 0;
  private spent: BudgetExceeded | undefined;

  constructor(
    readonly budget: Budget,
    private readonly now: () => number,
    private readonly exceeded: (what: BudgetExceeded) => void,
    /** When the run began (its message accepted): wall time counts from then. Default: now. */
    startedAt?: number,
    /** The account of the turn that started this one, when that turn has one. */
    above?: TokenAccount,
  ) {
    const at = now();
    this.startedAt = Math.min(startedAt ?? at, at);
    this.lastActivity = at;
    const { timeoutMs } = budget;
    if (timeoutMs !== undefined) {
      const left = Math.max(0, timeoutMs - (at - this.startedAt));
      this.wallTimer = setTimeout(() => this.spend('timeout', timeoutMs, this.now() - this.startedAt), left);
    }
    this.armIdle();
    this.account = new TokenAccount(budget.maxTokens, above);
    this.account.watch((spent) => this.spend('tokens', spent.limit, spent.used));
  }

  /** The first budget spent, once one is. */
  get exceededBy(): BudgetExceeded | undefined {
    return this.spent;
  }

  /** A model response or tool result arrived: the idle clock restarts. */
  activity(): void {
    this.lastActivity = this.now();
    this.armIdle();
  }

  /** The turn's own token total so far (its responses): what is new since the last call is charged. */
  tokens(ownTotal: number): void {
    const added = ownTotal - this.ownCharged;
    this.ownCharged = Math.max(this.ownCharged, ownTotal);
    this.account.charge(added);
  }

  /** What is left, for a child: its budget is at most this (tokens: what its whole tree has left). */
  remainder(): Budget {
    const left: Budget = {};
    const { timeoutMs, idleTimeoutMs } = this.budget;
    if (timeoutMs !== undefined) left.timeoutMs = Math.max(1, timeoutMs - (this.now() - this.startedAt));
    if (idleTimeoutMs !== undefined) left.idleTimeoutMs = idleTimeoutMs;
    const tokensLeft = this.account.left();
    if (tokensLeft !== undefined) left.maxTokens = Math.max(1, tokensLeft);
    return left;
  }

  /** The turn ended: no timer is left and its account tells it nothing more. */
  stop(): void {
    this.stopTimers();
    this.account.close();
  }

  private stopTimers(): void {
    clearTimeout(this.wallTimer);
    clearTimeout(this.idleTimer);
  }

  private armIdle(): void {
    const { idleTimeoutMs } = this.budget;
    if (idleTimeoutMs === undefined || this.spent) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.spend('idle', idleTimeoutMs, this.now() - this.lastActivity), idleTimeoutMs);
  }

  private spend(budget: BudgetKind, limit: number, used: number): void {
    if (this.spent) return;
    this.spent = { budget, limit, used };
    this.stopTimers();
    this.exceeded(this.spent);
  }
}
