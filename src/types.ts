/** Types shared across modules. Public ones are re-exported from src/index.ts. */
import type { z } from 'zod';
import type { Disposer } from './disposer.js';
import type { Budget, BudgetKind } from './scheduler/types.js';

export type { Disposer } from './disposer.js';

export type JsonSchemaObject = { [key: string]: unknown };

/** How a turn ended (SPEC §7): every value, once; the wire protocol checks against this list. */
export const STOP_REASONS = ['completed', 'aborted', 'error', 'max-tokens', 'refusal', 'max-steps', 'budget'] as const;
export type StopReason = (typeof STOP_REASONS)[number];
export type CodeMode = 'native' | 'code' | 'both';
/** How a tool call may share its turn with others (SPEC §7.2): in the rolling pool, or alone as a barrier. */
export type ConcurrencyClass = 'parallel' | 'exclusive';

/** createBrood's `codeResourceLimits`: what each run_code program may use (defaults in src/defaults.ts). */
export interface CodeResourceLimits {
  /** The program's heap in MiB (8–1024, default 64). The engine's whole memory is capped a little above it. */
  memoryMb?: number;
  /** The program's stack in KiB (64–4096, default 1024): roughly 5 nested calls per KiB. */
  stackKb?: number;
  /** Logged lines plus the return value, UTF-8 bytes (1 KiB–64 MiB, default 1 MiB). */
  maxOutputBytes?: number;
  /** Tool calls one program may make (1–100,000, default 1,000). */
  maxToolCalls?: number;
}

export type ResolvedCodeLimits = Required<CodeResourceLimits>;

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

export interface ModelRoute {
  provider: string;
  model: string;
  reasoningEffort?: string;
  maxTokens?: number;
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

export interface SendOptions {
  /** Already aborted, or aborted before the message is accepted: rejects ABORTED and the message never runs. */
  signal?: AbortSignal;
}

export interface RunOptions extends SendOptions {
  /** This run's deadline and token budget; tightened by the agent's own (see docs/limits-and-budgets.md). */
  budget?: Budget;
  /** The model answers through a `structured_output` tool with these parameters (zod or JSON Schema). */
  outputSchema?: z.ZodType | JsonSchemaObject;
}

export type ToolFilter = { allow?: string[]; deny?: string[] };

export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchemaObject;
}

export interface ToolView {
  names: string[];
  schemas: ToolSchema[];
  has(name: string): boolean;
}

export interface ToolResult {
  isError: boolean;
  content: string;
  value?: unknown;
  error?: { code?: string; message: string };
}

export interface ToolCallRequest {
  name: string;
  arguments: unknown;
  callId?: string;
  signal?: AbortSignal;
}

export interface ToolRegistry {
  register(tool: ToolDefinition): Disposer;
  restrict(filter: ToolFilter): Disposer;
  view(): ToolView;
  execute(call: ToolCallRequest): Promise<ToolResult>;
  sdk(): string;
  on(event: 'change', fn: () => void): Disposer;
}

export interface ToolContext {
  callId: string;
  agent: Agent | undefined;
  signal: AbortSignal;
}

export type ToolPresentation = false | { description?: string; parameters?: JsonSchemaObject };

/** What defineTool returns; parameters are already normalised to JSON Schema plus a validator. */
export interface ToolDefinition<A = unknown> {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchemaObject;
  /** Validates model- or host-supplied arguments; throws BroodError INVALID_ARGS. */
  readonly parse: (args: unknown) => A;
  readonly execute: (args: A, ctx: ToolContext) => unknown;
  readonly concurrencySafe?: boolean | ((args: A) => boolean);
  /** Safe to run twice: a call whose outcome a crash left unknown runs again on resume (docs/sessions.md). */
  readonly idempotent?: boolean;
  readonly forAgent?: (agent: Agent | undefined) => ToolPresentation;
  /** Whether a call needs the host's approval first (see docs/approvals.md). */
  readonly approval?: 'ask' | ((args: A, ctx: ToolContext) => ApprovalVerdict | Promise<ApprovalVerdict>);
}

export interface PromptContext {
  agent: Agent | undefined;
  tools: ToolView;
}

export interface PromptSection {
  name: string;
  order?: number;
  tool?: string;
  text: string | ((ctx: PromptContext) => string);
}

export interface AssembledPrompt {
  system: string;
  sections: { name: string; text: string }[];
}

export interface PromptRegistry {
  register(section: PromptSection): Disposer;
  variable(name: string, value: (ctx: PromptContext) => string | undefined): Disposer;
  assemble(): AssembledPrompt;
}

export type AgentStatus = 'idle' | 'running' | 'disposed';

export interface Agent {
  readonly id: string;
  readonly depth: number;
  readonly parentId: string | undefined;
  readonly status: AgentStatus;
  readonly tools: ToolRegistry;
  readonly prompt: PromptRegistry;
  send(message: string, opts?: SendOptions): Promise<string>;
  run<S extends z.ZodType>(message: string, opts: RunOptions & { outputSchema: S }): Promise<TurnResult<z.output<S>>>;
  run(message: string, opts?: RunOptions): Promise<TurnResult>;
  /** This agent's events (and, by default, its descendants'); see BroodEvent. */
  events(options?: AgentEventsOptions): AsyncIterable<BroodEvent>;
  whenIdle(): Promise<void>;
  cancel(cause?: 'user' | 'parent'): void;
  dispose(): Promise<void>;
}

export interface SessionHeader {
  id: string;
  createdAt: number;
  parentSession?: string;
  origin?: 'subagent';
  delegationDepth: number;
  seedLength?: number;
  model: ModelRoute;
}

export interface SessionEvent {
  seq: number;
  time: number;
  type: string;
  data: Record<string, unknown>;
}

export interface SessionStore {
  create(header: SessionHeader): Promise<void>;
  append(id: string, events: SessionEvent[]): Promise<void>;
  flush(id: string): Promise<void>;
  read(id: string): Promise<{ header: SessionHeader; events: SessionEvent[] }>;
  list(): Promise<SessionHeader[]>;
  /**
   * Optional single-writer ownership (fileSessions implements it with a lock file): the runtime calls
   * it before it writes a session it did not just create, and for every session it creates; it must
   * reject with SESSION_LOCKED while another writer holds the session.
   */
  acquire?(id: string): Promise<void>;
  /** Gives up what acquire() took; called when the agent is disposed. */
  release?(id: string): Promise<void>;
}

// ---- Host events (SPEC §15): what brood.events() / agent.events() yield. ----

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

/** What a tool's `approval`, the runtime's `policy` and a verdict say about one call (docs/approvals.md). */
export type ApprovalVerdict = 'allow' | 'deny' | 'ask';

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
