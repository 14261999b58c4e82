/**
 * The contract between a driver (the agent loop, running in a worker or inline) and its parent.
 * Everything here is structured-cloneable: it crosses a thread link when the runner is 'worker'. The
 * wire declarations in src/wire/protocol.ts derive types that must stay assignable both ways to these
 * (test/unit/wire/protocol-agreement.test.ts checks it at compile time).
 */
import type { ChatMessage, ToolCallRecord } from '../models/types.js';
import type {
  CodeMode,
  ConcurrencyClass,
  ModelRoute,
  ResolvedCodeLimits,
  StopReason,
  ToolResult,
  ToolSchema,
  Usage,
} from '../types.js';

export type { ConcurrencyClass };
/** Static classes are shipped with the view; 'dynamic' (a concurrencySafe function) is asked per call. */
export type PlannedClass = ConcurrencyClass | 'dynamic';

/** What the model is shown for one scope, resolved by the parent's single resolver. */
export interface DriverView {
  system: string;
  tools: ToolSchema[];
  classes: Record<string, PlannedClass>;
}

/** Sent once per activation, only after the parent finished the agent's setup. */
export interface DriverPlan {
  agentId: string;
  /** The adapter is the one of `route.provider`, loaded in the driver's thread from configs sent once. */
  route: ModelRoute;
  /** null when the parent could not resolve it (a template error): the driver fetches it, and fails that turn. */
  view: DriverView | null;
  history: ChatMessage[];
  ownStart: number;
  maxParallelToolCalls: number;
  /** Model requests per turn; reaching it ends the turn 'max-steps' (default DEFAULT_MAX_STEPS). */
  maxSteps?: number;
  /**
   * The parent runs each assistant message's tool calls (DriverGateway.runTools), except a message with
   * a run_code call while Code Mode is on (its sandbox is in the driver's thread). Unset: the driver
   * schedules every call itself.
   */
  toolsInParent?: boolean;
  /**
   * The route's provider is governed by createBrood `limits`: ask the parent (DriverGateway.admit)
   * before each model request. Unset: no admission, not one crossing more.
   */
  admission?: boolean;
  /**
   * With `admission`: the activation's first model request was admitted with the plan (nothing
   * queued and far from the limit), so it asks nothing — a one-request child crosses no more than
   * without limits. The parent holds its lease until the response is logged or the activation ends.
   */
  firstAdmitted?: boolean;
  /**
   * With `admission`, a paced provider's schedule (src/wire/pace-cell.ts) when the driver runs in
   * the parent's process: the driver takes its own send time from it once admitted.
   */
  pace?: SharedArrayBuffer;
  /**
   * With `admission`, when the driver runs in the parent's process: an Int32 the parent sets to 1
   * when the next model request was admitted ahead (with the tool results that precede it); the
   * driver takes it (back to 0) and asks nothing.
   */
  credit?: SharedArrayBuffer;
  /** Int32 cell the parent keeps non-zero while a host subscribes to events: only then are text deltas sent. */
  eventsFlag?: SharedArrayBuffer;
  codeMode: CodeMode;
  codeBusyTimeoutMs: number;
  codeWallTimeoutMs: number;
  codeLimits: ResolvedCodeLimits;
  /**
   * Int32 version cells the parent bumps on every registry/prompt change that may affect this agent:
   * one shared by the whole runtime (global layers) and one of the agent's own (its layers).
   */
  versions: SharedArrayBuffer[];
  /**
   * Int32 cell the parent bumps when a message waits for the running turn's next model step (a
   * child's `next-step` report), and its value when this plan was made: the driver asks for the
   * message (DriverGateway.joinMessages) only when the cell moved, so steps cost no round trip otherwise.
   */
  stepCell?: SharedArrayBuffer;
  stepSeen?: number;
  /** The message the parent already claimed for this activation's first turn (saves a round trip). */
  firstMessage?: ClaimedMessage;
  /** Set when this activation recovers an agent whose thread died mid-turn: continue that turn. */
  resumeTurn?: ResumedTurn;
}

export interface ResumedTurn {
  turn: number;
  messageId: string;
  /** Calls whose `tool/call` event is already logged (not logged twice on re-attach). */
  startedCallIds: string[];
  /** `finish` of the turn's last logged assistant message; a final one means the turn only needs ending. */
  lastFinish?: string;
  /**
   * Resumed after a crash: calls whose outcome is unknown. The parent decides what each gets (see
   * src/agents/resumed-calls.ts), so even a run_code among them is asked of the parent, never re-run here.
   */
  interruptedCallIds?: string[];
}

export interface ClaimedMessage {
  turn: number;
  messageId: string;
  text: string;
  /** The message's run() signal was aborted while it was queued: end the turn aborted without a model call. */
  aborted: boolean;
  /** Messages the turn took with its own (quiet reports), in order; they precede `text` in the history. */
  joined?: JoinedMessage[];
  /** W3C trace context of the turn's span (createBrood telemetry with propagate): sent with its model requests. */
  traceHeaders?: Record<string, string>;
}

/** A message that joins a turn without being the one it claimed. */
export interface JoinedMessage {
  messageId: string;
  text: string;
}

export interface DriverEvent {
  type: string;
  data: Record<string, unknown>;
}

export interface TurnReport {
  turn: number;
  output: string;
  stopReason: StopReason;
  usage: Usage;
  diagnostic?: string;
}

/** Calls a driver makes on its parent. Every one is validated on arrival (see src/wire/protocol.ts). */
export interface DriverGateway {
  claimNext(): Promise<ClaimedMessage | null>;
  refreshView(): Promise<DriverView>;
  classify(name: string, args: string): Promise<ConcurrencyClass>;
  executeTool(call: ToolCallRequestWire): Promise<ToolResult>;
  /**
   * A call from inside a run_code program: run host-style (not collapsed by Code Mode) within the
   * program's bounds, answered as the JSON the sandbox takes (src/agents/code-calls.ts).
   */
  callFromCode(call: CodeCallWire): Promise<CodeCallReply>;
  /** The program ended: the parent answers and aborts its outstanding calls and drops their results. */
  endProgram(program: string): Promise<void>;
  /** One-way on the worker transport (no reply): ordering on the link keeps it ahead of later calls. */
  log(events: DriverEvent[]): Promise<void>;
  /**
   * Resolves once everything logged so far has left this thread (worker transport, which batches
   * per tick). Absent where logs are delivered at once (inline).
   */
  sent?(): Promise<void>;
  /**
   * Runs one assistant message's tool calls in the parent, with the SPEC §7.2 pool capped at the
   * parent's maxParallelToolCalls (classified right before each start, `tool/call` and `tool/result`
   * logged there); resolves with the results in model order. Absent where the host cannot: the
   * driver then schedules the calls itself through `classify` and `executeTool`.
   */
  runTools?(batch: ToolBatchWire): Promise<ToolResult[]>;
  /**
   * Asked before a model step when the plan's step cell moved: the messages that join the running
   * `turn` now (durably logged as `turn/join` before the answer), possibly none.
   */
  joinMessages(turn: number): Promise<JoinedMessage[]>;
  /** Ends the turn and claims the next message in the same round trip. */
  endTurn(report: TurnReport): Promise<ClaimedMessage | null>;
  /**
   * Only when the plan says `admission`: resolves when the parent's scheduler admits the model request
   * about to be made. The response's `assistant/message` log releases it (usage corrects the token
   * estimate); a retry after a 429/503 asks again with the announced pause. A paced provider's grant
   * names the request's slot: the driver sends it then (src/driver/admission.ts).
   */
  admit?(request: AdmitRequestWire): Promise<AdmitGrant | null>;
  /**
   * A call to an AI SDK model the parent keeps (aiSdkModels' proxied shape): open a request, pull its
   * stream parts in batches, cancel it (src/models/ai-sdk/proxy-server.ts checks and answers it).
   */
  modelProxy?(call: unknown): Promise<unknown>;
}

/** A paced request's slot: send at `at`, both on the parent's clock `clock` (src/wire/clock.ts). */
export interface AdmitGrant {
  at: number;
  grantedAt: number;
  clock: string;
}

export interface AdmitRequestWire {
  provider: string;
  /** Estimated input + output tokens of the request. */
  tokens: number;
  /** The previous attempt was refused with this retry-after: the provider pauses for every agent. */
  retryAfterMs?: number;
  /** The previous grant reached the driver too late and was never sent: its slot may be reused. */
  givenBack?: boolean;
  /** The driver takes its own slot from the plan's `pace` cell (the grant's slot is only a hint). */
  claims?: boolean;
}

export interface ToolCallRequestWire {
  callId: string;
  name: string;
  arguments: string;
}

export interface CodeCallWire {
  /** Drawn by the driver for each program: what the parent keys the program's calls by (never a model's id). */
  program: string;
  /** `<run_code callId>:code:<n>`, the id the tool sees. */
  callId: string;
  name: string;
  arguments: string;
}

/**
 * A call's answer: the result value as JSON text, or the string itself when the value is a string
 * (it reaches the program as it is: JSON-encoding and parsing a long string again was ms of work on
 * each thread it crossed), or the failure's message.
 */
export type CodeCallReply = { ok: true; json: string } | { ok: true; text: string } | { ok: false; message: string };

export interface ToolBatchWire {
  calls: ToolCallRecord[];
}
