/**
 * Budgets of a run: the schema (INVALID_CONFIG at every door), how they combine down the tree (only
 * ever tighter) and the watch that ends a turn when one is spent.
 */
import { z } from 'zod';
import { parseConfig } from '../untrusted.js';
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

/** What the turn's diagnostic says about the budget that ended it. */
export function budgetDiagnostic(exceeded: BudgetExceeded): string {
  const unit = exceeded.budget === 'tokens' ? ' tokens' : ' ms';
  return `the run hit its budget (${exceeded.budget}): used ${Math.round(exceeded.used)}${unit} of ${exceeded.limit}${unit}`;
}

/**
 * One turn's budget: wall time from the run's start (its message accepted, queueing included), idle time since the last model response or tool
 * result, tokens as responses report them (the caller passes the running total, children included).
 * `exceeded` is called once, with the first budget spent.
 */
export class BudgetWatch {
  private readonly startedAt: number;
  private lastActivity: number;
  private wallTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private tokensUsed = 0;
  private spent: BudgetExceeded | undefined;

  constructor(
    readonly budget: Budget,
    private readonly now: () => number,
    private readonly exceeded: (what: BudgetExceeded) => void,
    /** When the run began (its message accepted): wall time counts from then. Default: now. */
    startedAt?: number,
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

  /** The turn's token total so far (its own responses and its children's). */
  tokens(total: number): void {
    this.tokensUsed = total;
    const { maxTokens } = this.budget;
    if (maxTokens !== undefined && total >= maxTokens) this.spend('tokens', maxTokens, total);
  }

  /** What is left, for a child: its budget is at most this. */
  remainder(): Budget {
    const left: Budget = {};
    const { timeoutMs, idleTimeoutMs, maxTokens } = this.budget;
    if (timeoutMs !== undefined) left.timeoutMs = Math.max(1, timeoutMs - (this.now() - this.startedAt));
    if (idleTimeoutMs !== undefined) left.idleTimeoutMs = idleTimeoutMs;
    if (maxTokens !== undefined) left.maxTokens = Math.max(1, maxTokens - this.tokensUsed);
    return left;
  }

  stop(): void {
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
    this.stop();
    this.exceeded(this.spent);
  }
}
