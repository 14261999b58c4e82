/**
 * What `createAgent` and `resumeAgent` take: the facade (src/brood.ts) exports these, the runtime
 * applies them after the config schema has checked them.
 */
import type { HistoryMessage } from '../agents/given-history.js';
import type { Budget } from '../scheduler/types.js';
import type { CodeMode, ModelRoute, ToolFilter } from '../types.js';

export interface CreateAgentOptions {
  id?: string;
  model: ModelRoute;
  persona?: string;
  toolFilter?: ToolFilter;
  codeMode?: CodeMode;
  depth?: number;
  /** Model requests per turn for this agent (default: the runtime's maxSteps). */
  maxSteps?: number;
  /** Deadline and token budget of each of this agent's runs (see docs/limits-and-budgets.md). */
  budget?: Budget;
  /** Already aborted, or aborted before the agent is published: rejects ABORTED and nothing is published. */
  signal?: AbortSignal;
  /** A conversation the agent's first turn continues (docs/agents-and-turns.md, "History"). */
  history?: HistoryMessage[];
}

export interface ResumeAgentOptions {
  model?: ModelRoute;
  depth?: number;
  signal?: AbortSignal;
  /** The per-request context of the turns this resume runs (a live agent is returned as it is). */
  context?: unknown;
}
