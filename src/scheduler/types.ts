/**
 * createBrood's `limits` and the `Budget` of agents, runs and subagentTool (see docs/limits-and-budgets.md).
 * All public: src/index.ts exports this module whole.
 */

export interface ProviderLimits {
  /** Requests of this provider in flight at once. */
  concurrent?: number;
  requestsPerMinute?: number;
  /** Input + output tokens per minute (estimated from the request, corrected by reported usage). */
  tokensPerMinute?: number;
}

export type QueueOrder = 'deeper-first' | 'fifo';

export interface Limits {
  /** Agents whose turn is running at once, whole runtime (an agent waiting on its children does not count). */
  agents?: number;
  /** Model requests in flight at once, all providers. */
  modelRequests?: number;
  /** By catalog provider id. */
  providers?: Record<string, ProviderLimits>;
  queue?: { max?: number; order?: QueueOrder };
}

export interface Budget {
  /** Wall time of the run. */
  timeoutMs?: number;
  /** Time without a model response or tool result. */
  idleTimeoutMs?: number;
  /** Input + output tokens as responses report them (a child's whole subtree counts). */
  maxTokens?: number;
}

export type BudgetKind = 'timeout' | 'idle' | 'tokens';

export interface SchedulerStats {
  /** Agents whose turn holds a slot now. */
  running: number;
  /** Agent turns and model requests waiting for admission. */
  queued: number;
  /** Model requests in flight, by provider. */
  inFlight: Record<string, number>;
  /** Total time providers' admissions were paused by retry-after. */
  throttledMs: number;
}

export interface SchedulerView {
  stats(): SchedulerStats;
}
