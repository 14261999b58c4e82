/**
 * How a turn ended and what it used: the words a TurnResult, the host events, the session log and the
 * model adapters share. Imports nothing, so every type file may build on it.
 */

/** How a turn ended (SPEC §7): every value, once; the wire protocol checks against this list. */
export const STOP_REASONS = ['completed', 'aborted', 'error', 'max-tokens', 'refusal', 'max-steps', 'budget'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export interface Usage {
  /** Every prompt token, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens: read from the provider's prompt cache, where the provider reports it. */
  cacheReadTokens?: number;
  /** Of inputTokens: written to the provider's prompt cache, where the provider reports it. */
  cacheWriteTokens?: number;
  /** Of outputTokens: spent on reasoning, where the provider reports it (AI SDK models). */
  reasoningTokens?: number;
}

/** Token usage of one agent and its descendants (TurnResult.usageTree, brood.usage()). */
export interface UsageNode {
  agentId: string;
  /** A child's delegation label (the subagent call's description). */
  label?: string;
  provider: string;
  model: string;
  /** This agent's own requests. */
  usage: Usage;
  /** Own plus every descendant's in `children`. */
  total: Usage;
  children: UsageNode[];
}

export interface TurnResult<S = unknown> {
  output: string;
  stopReason: StopReason;
  usage: Usage;
  /** The turn's own requests and its foreground children's, as a tree (usage === usageTree.total). */
  usageTree: UsageNode;
  diagnostic?: string;
  /** With `run(text, { outputSchema })`: the validated `structured_output` value (absent when none was valid). */
  structured?: S;
}
