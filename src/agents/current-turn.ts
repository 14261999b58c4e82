/**
 * The state of an agent's running turn as the parent keeps it: what its tool calls, cancel grace and
 * a recovered driver read and change. The ledger that opens and closes turns is src/agents/turns.ts.
 */
import type { ToolResult, Usage, UsageNode } from '../types.js';
import type { LazyAbortController } from '../util/lazy-abort.js';
import type { InterruptedCall } from './open-turn.js';
import type { StructuredTurn } from './structured-turn.js';

export interface CurrentTurn {
  readonly turn: number;
  readonly messageId: string;
  /**
   * The turn's parent-side cancellation, handed to its tool calls (and through them to foreground
   * children); its AbortSignal is made only when a tool or hook reads `ctx.signal`.
   */
  readonly controller: LazyAbortController;
  readonly childUsage: Usage;
  /** The foreground children's usage trees, in the order they settled (the turn's usageTree children). */
  readonly childTrees: UsageNode[];
  /** The turn's own usage and output, from the logged assistant messages (survives a driver recovery). */
  readonly usage: Usage;
  output: string;
  /** Call ids of the latest assistant message whose `tool/call` event is logged. */
  readonly started: Set<string>;
  /** `finish` of the turn's latest logged assistant message (a recovery must not re-ask a finished turn). */
  lastFinish: string | undefined;
  /** Run when the turn ends (timers). */
  readonly cleanup: (() => void)[];
  /**
   * The model's in-flight and uncommitted tool calls by call id: a re-issued call re-attaches instead
   * of running twice. Calls from inside run_code are never here (src/agents/code-calls.ts).
   */
  readonly calls: Map<string, Promise<ToolResult>>;
  /**
   * Results of the model's calls that a parent-side batch runs (src/agents/parent-tools.ts), by call
   * id, settled as each is committed: a recovered driver's re-issued calls wait on these.
   */
  readonly committed: Map<string, Promise<ToolResult>>;
  /** run(text, { outputSchema }): this turn's structured_output tool and what it recorded. */
  readonly structured: StructuredTurn | undefined;
  /** The per-request context of the message this turn claimed: its tool calls carry it (never written). */
  readonly context: unknown;
  /**
   * Parent-side tool calls the driver is waiting for: what holds a cancelled turn, if not the driver.
   * Made by the first and dropped with the last (a wide fan-out's children hold none while they wait).
   */
  held: Set<HeldCall> | undefined;
  /** Set when cancel grace ran out on held calls: the turn's diagnostic names them, not the driver. */
  heldDiagnostic?: string | undefined;
  /**
   * A turn resumed after a crash: the calls whose `tool/call` was logged with no result (outcome
   * unknown), each taken once when the resumed driver issues it again (src/agents/resumed-calls.ts).
   */
  readonly interrupted: Map<string, InterruptedCall>;
  /** Of those, the calls whose approval request is still open: they never ran and wait for the host. */
  readonly awaitingApproval: Set<string>;
}

export interface HeldCall {
  readonly callId: string;
  readonly name: string;
  /** Answers the driver now with an ABORTED result; the tool's own result, if it ever comes, is dropped. */
  abandon(message: string): void;
}
