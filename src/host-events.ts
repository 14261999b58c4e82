/** Host events (SPEC §15): what brood.events() / agent.events() yield. */
import type { BudgetKind } from './scheduler/types.js';
import type { StopReason, Usage } from './turn-result.js';

export interface BroodEventBase {
  agentId: string;
  /** undefined for a top-level agent (and for `lagged`). */
  parentId: string | undefined;
  depth: number;
  /** Epoch milliseconds. */
  time: number;
}

export interface TurnStartEvent extends BroodEventBase {
  type: 'turn-start';
  turn: number;
  messageIds: string[];
}

export interface TurnEndEvent extends BroodEventBase {
  type: 'turn-end';
  turn: number;
  stopReason: StopReason;
  /** The turn's own requests plus its foreground children's, as in the TurnResult. */
  usage: Usage;
  diagnostic?: string;
}

export interface TextDeltaEvent extends BroodEventBase {
  type: 'text-delta';
  turn: number;
  delta: string;
}

export interface AssistantMessageEvent extends BroodEventBase {
  type: 'assistant-message';
  turn: number;
  text: string;
  toolCalls: { id: string; name: string }[];
  /** The model's finish for this response ('tool-calls' when it asked for tools). */
  finish: 'stop' | 'tool-calls' | 'max-tokens' | 'refusal' | 'error';
}

export interface ToolStartEvent extends BroodEventBase {
  type: 'tool-start';
  turn: number;
  callId: string;
  name: string;
  /** The parsed JSON arguments; the raw text when it is not valid JSON. */
  args: unknown;
}

export interface ToolEndEvent extends BroodEventBase {
  type: 'tool-end';
  turn: number;
  callId: string;
  name: string;
  isError: boolean;
  content: string;
}

/** Emitted on the parent's agentId when one of its children starts a run. */
export interface SubagentRunStartEvent extends BroodEventBase {
  type: 'subagent-start';
  childId: string;
  /** 'background' is a one-shot job; 'continuable' a child that keeps its conversation. */
  mode: 'foreground' | 'background' | 'continuable';
  provider: string;
}

/** Emitted on the parent's agentId when that run ended (after every event of the child's run). */
export interface SubagentRunEndEvent extends BroodEventBase {
  type: 'subagent-end';
  childId: string;
  stopReason: StopReason;
  usage: Usage;
}

/** Emitted on the parent's agentId when one of its continuable children reported (the report message was accepted). */
export interface SubagentReportEvent extends BroodEventBase {
  type: 'subagent-report';
  childId: string;
  /** The id of the report's message in the parent's session. */
  messageId: string;
}

/** The subscriber fell behind by more than its buffer: `dropped` events were discarded (oldest first). */
export interface LaggedEvent extends BroodEventBase {
  type: 'lagged';
  dropped: number;
}
/** A call waits for `brood.approvals.respond()`; it was logged in the agent's session first. */
export interface ApprovalRequestEvent extends BroodEventBase {
  type: 'approval-request';
  approvalId: string;
  callId: string;
  tool: string;
  /** The arguments the model gave (parsed). */
  args: unknown;
  /** True for a `tools.x()` call from inside run_code. */
  viaCode: boolean;
}

/** A decision was logged (before it is applied). */
export interface ApprovalResolvedEvent extends BroodEventBase {
  type: 'approval-resolved';
  approvalId: string;
  callId: string;
  tool: string;
  decision: 'approved' | 'denied' | 'expired';
  /** `host`: respond(); `policy`: a tool's rule, the runtime's policy or children rule, expiry, a cancelled turn. */
  by: 'host' | 'policy';
}

/** An agent turn or a model request waits for admission (createBrood `limits`). */
export interface QueuedEvent extends BroodEventBase {
  type: 'queued';
  what: 'agent' | 'model-request';
  /** The model request's provider (absent for an agent turn). */
  provider?: string;
  /** 1 = next to be admitted. */
  position: number;
}

/** What was queued is admitted after `waitedMs`. */
export interface AdmittedEvent extends BroodEventBase {
  type: 'admitted';
  what: 'agent' | 'model-request';
  waitedMs: number;
}

/** A provider answered 429/503 with a retry-after: its admissions pause for every agent. */
export interface ThrottledEvent extends BroodEventBase {
  type: 'throttled';
  provider: string;
  retryAfterMs: number;
}

/** A turn spent one of its budgets; it ends with stop reason 'budget'. */
export interface BudgetExceededEvent extends BroodEventBase {
  type: 'budget-exceeded';
  budget: BudgetKind;
  limit: number;
  used: number;
}

/**
 * A session's interrupted turn (started, never ended: a crash or a restart) was resumed
 * (brood.recover(), resumeAgent, or a parent's delegation call resuming its child).
 */
export interface RecoveredEvent extends BroodEventBase {
  type: 'recovered';
  turn: number;
  /** Model requests sent again because no answer was logged. */
  replayedRequests: number;
  /** Calls whose outcome was unknown, run again (idempotent tools). */
  rerunCalls: number;
  /** Calls whose outcome was unknown, not run again: the model got TOOL_OUTCOME_UNKNOWN. */
  unknownCalls: number;
}

export type BroodEvent =
  | RecoveredEvent
  | TurnStartEvent
  | TurnEndEvent
  | TextDeltaEvent
  | AssistantMessageEvent
  | ToolStartEvent
  | ToolEndEvent
  | SubagentRunStartEvent
  | SubagentRunEndEvent
  | SubagentReportEvent
  | ApprovalRequestEvent
  | ApprovalResolvedEvent
  | QueuedEvent
  | AdmittedEvent
  | ThrottledEvent
  | BudgetExceededEvent
  | LaggedEvent;

export type BroodEventType = BroodEvent['type'];
export type BroodEventOf<T extends BroodEventType> = Extract<BroodEvent, { type: T }>;

export interface BroodEventsOptions {
  /** Aborting ends the iteration (like breaking out of the loop). */
  signal?: AbortSignal;
  /** Events held for a slow consumer before deltas are coalesced and the oldest dropped (default 10 000). */
  buffer?: number;
}

export interface AgentEventsOptions extends BroodEventsOptions {
  /** Include every descendant's events (default true). */
  descendants?: boolean;
}
