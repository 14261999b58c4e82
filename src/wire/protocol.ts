/**
 * The one wire protocol between the parent and the places drivers run (pool threads; `brood host`
 * processes over Redis). Every message that crosses is declared here once, with src/declare.ts: its
 * TypeScript type, its fast check (run on every message) and its zod schema (built only to explain a
 * rejection) all derive from that declaration. Objects are loose (unknown keys pass through).
 *
 * The gateway (what a driver may ask of its parent) is declared once too, at the end, as a table of
 * methods; src/wire/gateway.ts derives both sides' types, the method list and the dispatch from it.
 * The frames a link carries are in src/wire/frames.ts.
 *
 * Nothing here knows about MessagePort: frames are plain data batched by src/wire/link.ts over any
 * carrier. The one exception is SharedArrayBuffer fields (view version cells, the watch board), which
 * only a thread carrier can move; a process carrier replaces them with their values.
 */
import {
  array,
  bool,
  type Decl,
  extend,
  int,
  literal,
  nullable,
  num,
  object,
  oneOf,
  optional,
  record,
  sharedBuffer,
  sharedCell,
  str,
  tagged,
  tuple,
  union,
  unknown,
} from '../declare.js';
import { modelRoute } from '../models/route.js';
import { type ConcurrencyClass, STOP_REASONS } from '../types.js';
import { errorEnvelope, nothing } from './reply.js';
import { type Wire, type WireType, wire } from './wire-type.js';

export type { Wire, WireType } from './wire-type.js';
export type { ConcurrencyClass };

// ——— payloads ———

const usage = object({
  inputTokens: num('nonnegative'),
  outputTokens: num('nonnegative'),
  cacheReadTokens: optional(num('nonnegative')),
  cacheWriteTokens: optional(num('nonnegative')),
  reasoningTokens: optional(num('nonnegative')),
});

export const concurrencyClass = wire(oneOf(['parallel', 'exclusive']));

const toolSchema = object({ name: str(), description: str(), parameters: record() });

/** A content part as brood keeps it (src/models/content-parts.ts): base64 or an https: URL in `data`. */
const messagePart = tagged('type', [
  object({ type: literal('text'), text: str() }),
  object({ type: literal('image'), data: str(), mediaType: str({ min: 1 }) }),
  object({ type: literal('file'), data: str(), mediaType: str({ min: 1 }), filename: optional(str()) }),
]);
const messageParts = optional(array(messagePart));

const toolResultDecl = object({
  isError: bool(),
  content: str(),
  value: optional(unknown()),
  error: optional(object({ code: optional(str()), message: str() })),
  rewrittenArguments: optional(str()),
  parts: messageParts,
});
export const toolResult = wire(toolResultDecl);

/** Static classes are shipped with the view; 'dynamic' (a concurrencySafe function) is asked per call. */
const plannedClass = oneOf(['parallel', 'exclusive', 'dynamic']);
export type PlannedClass = Wire<typeof plannedClass>;

/** What the model is shown for one scope, resolved by the parent's single resolver. */
const driverViewDecl = object({ system: str(), tools: array(toolSchema), classes: record(plannedClass) });
export const driverView = wire(driverViewDecl);
export type DriverView = Wire<typeof driverViewDecl>;

/** A message that joins a turn without being its claim (a child's report). */
const joined = object({ messageId: str(), text: str() });
export type JoinedMessage = Wire<typeof joined>;
/** modelProxy's answer: checked by the AI SDK adapter that reads it (src/models/ai-sdk/proxy-source.ts). */
export const anyValue = wire(unknown());

/** The answer to joinMessages: what joins the running turn at this step, in order. */
export const joinedMessages = wire(array(joined));

const claim = object({
  turn: int('nonnegative'),
  messageId: str(),
  text: str(),
  /** The message's content parts when it has media (`text` is then its text parts joined). */
  parts: messageParts,
  /** The message's run() signal was aborted while it was queued: end the turn aborted without a model call. */
  aborted: bool(),
  /** Messages the turn took with its own (quiet reports), in order; they precede `text` in the history. */
  joined: optional(array(joined)),
  /** W3C trace context of the turn's span (telemetry with propagate): the adapter sends it with each request. */
  traceHeaders: optional(record(str())),
});
export const claimedMessage = wire(nullable(claim));
export type ClaimedMessage = Wire<typeof claim>;

/** admit's argument: the request about to be made (or retried after a 429/503 with its pause). */
const admitRequestDecl = object({
  provider: str({ min: 1 }),
  /** Estimated input + output tokens of the request. */
  tokens: num('nonnegative'),
  /** The previous attempt was refused with this retry-after: the provider pauses for every agent. */
  retryAfterMs: optional(num('nonnegative')),
  /** The previous grant reached the driver too late and was never sent: its slot may be reused. */
  givenBack: optional(bool()),
  /** The driver takes its own slot from the plan's `pace` cell (the grant's slot is only a hint). */
  claims: optional(bool()),
});
export type AdmitRequestWire = Wire<typeof admitRequestDecl>;

/**
 * admit's answer: null, or a paced request's slot — send at `at` on the parent's clock named `clock`
 * (src/wire/clock.ts), granted at `grantedAt` on that clock.
 */
const admitGrantDecl = object({ at: num(), grantedAt: num(), clock: str() });
export const admitGrant = wire(nullable(admitGrantDecl));
export type AdmitGrant = Wire<typeof admitGrantDecl>;

const toolCall = object({ callId: str({ min: 1 }), name: str({ min: 1 }), arguments: str() });
export const toolCallRequest = wire(toolCall);
export type ToolCallRequestWire = Wire<typeof toolCall>;

/** A run_code program's id: drawn by its driver (a UUID), never chosen by a model. */
const programIdDecl = str({ min: 1, max: 64 });
export const programId = wire(programIdDecl);

/**
 * A call from inside a run_code program (`program` keys the program's calls in the parent; `callId` is
 * `<run_code callId>:code:<n>`, the id the tool sees), and its answer as the sandbox takes it: the
 * result value as JSON text, or the string itself when the value is a string (it reaches the program
 * as it is: JSON-encoding and parsing a long string again was ms of work on each thread it crossed),
 * or the failure's message.
 */
const codeCallDecl = extend(toolCall, { program: programIdDecl });
export const codeCallRequest = wire(codeCallDecl);
export type CodeCallWire = Wire<typeof codeCallDecl>;
const codeCallReplyDecl = union([
  object({ ok: literal(true), json: str() }),
  object({ ok: literal(true), text: str() }),
  object({ ok: literal(false), message: str() }),
]);
export const codeCallReply = wire(codeCallReplyDecl);
export type CodeCallReply = Wire<typeof codeCallReplyDecl>;

/** One assistant message's tool calls, handed to the parent to run (SPEC §7.2; the cap is the parent's own). */
const toolBatchDecl = object({ calls: array(toolCall, { min: 1 }) });
export const toolBatch = wire(toolBatchDecl);
export type ToolBatchWire = Wire<typeof toolBatchDecl>;
/** Their results, in model order. */
export const toolResults = wire(array(toolResultDecl));

const driverEvent = object({ type: str({ min: 1 }), data: record() });
export type DriverEvent = Wire<typeof driverEvent>;
export const driverEventsDecl = array(driverEvent);
export const driverEvents = wire(driverEventsDecl);

const turnReportDecl = object({
  turn: int('nonnegative'),
  output: str(),
  stopReason: oneOf(STOP_REASONS),
  usage,
  diagnostic: optional(str()),
});
export const turnReport = wire(turnReportDecl);
export type TurnReport = Wire<typeof turnReportDecl>;

// ——— the plan (sent once per activation, after setup) ———
const codeLimits = object({
  memoryMb: int('positive'),
  stackKb: int('positive'),
  maxOutputBytes: int('positive'),
  maxToolCalls: int('positive'),
});

/** Provider reasoning blocks replayed with an assistant message (src/models/reasoning.ts, loose here like every wire object). */
const reasoning = array(
  tagged('type', [
    object({ type: literal('thinking'), thinking: str(), signature: str() }),
    object({ type: literal('redacted_thinking'), data: str() }),
  ]),
);

const chatMessage = tagged('role', [
  object({ role: literal('user'), text: str(), parts: messageParts }),
  object({ role: literal('assistant'), text: str(), toolCalls: array(toolCall), reasoning: optional(reasoning) }),
  object({ role: literal('tool'), callId: str(), name: str(), content: str(), isError: bool(), parts: messageParts }),
]);

/** Set when an activation recovers an agent whose thread died mid-turn: continue that turn. */
const resumeTurn = object({
  turn: int(),
  messageId: str(),
  /** Calls whose `tool/call` event is already logged (not logged twice on re-attach). */
  startedCallIds: array(str()),
  /** `finish` of the turn's last logged assistant message; a final one means the turn only needs ending. */
  lastFinish: optional(str()),
  /**
   * Resumed after a crash: calls whose outcome is unknown. The parent decides what each gets (see
   * src/agents/resumed-calls.ts), so even a run_code among them is asked of the parent, never re-run here.
   */
  interruptedCallIds: optional(array(str())),
});
export type ResumedTurn = Wire<typeof resumeTurn>;

/** Sent once per activation, only after the parent finished the agent's setup. */
export const driverPlanDecl = object({
  agentId: str(),
  /** The adapter is the one of `route.provider`, loaded in the driver's thread from configs sent once. */
  route: modelRoute,
  /** null when the parent could not resolve it (a template error): the driver fetches it, and fails that turn. */
  view: nullable(driverViewDecl),
  history: array(chatMessage),
  ownStart: int('nonnegative'),
  maxParallelToolCalls: int('positive'),
  /** Model requests per turn; reaching it ends the turn 'max-steps' (default DEFAULT_MAX_STEPS). */
  maxSteps: optional(int('positive')),
  /**
   * The parent runs each assistant message's tool calls (the gateway's runTools), except a message with
   * a run_code call while Code Mode is on (its sandbox is in the driver's thread). Unset: the driver
   * schedules every call itself.
   */
  toolsInParent: optional(bool()),
  /**
   * The route's provider is governed by createBrood `limits`: ask the parent (the gateway's admit)
   * before each model request. Unset: no admission, not one crossing more.
   */
  admission: optional(bool()),
  /**
   * With `admission`: the activation's first model request was admitted with the plan (nothing
   * queued and far from the limit), so it asks nothing — a one-request child crosses no more than
   * without limits. The parent holds its lease until the response is logged or the activation ends.
   */
  firstAdmitted: optional(bool()),
  /**
   * With `admission`, a paced provider's schedule (src/scheduler/pace-cell.ts) when the driver runs in
   * the parent's process: the driver takes its own send time from it once admitted.
   */
  pace: optional(sharedBuffer()),
  /**
   * With `admission`, when the driver runs in the parent's process: an Int32 the parent sets to 1
   * when the next model request was admitted ahead (with the tool results that precede it); the
   * driver takes it (back to 0) and asks nothing.
   */
  credit: optional(sharedBuffer()),
  /** Int32 cell the parent keeps non-zero while a host subscribes to events: only then are text deltas sent. */
  eventsFlag: optional(sharedCell()),
  codeMode: oneOf(['native', 'code', 'both']),
  codeBusyTimeoutMs: num('positive'),
  codeWallTimeoutMs: num('positive'),
  codeLimits,
  /**
   * Int32 version cells the parent bumps on every registry/prompt change that may affect this agent:
   * one shared by the whole runtime (global layers) and one of the agent's own (its layers).
   */
  versions: array(sharedCell()),
  /**
   * Int32 cell the parent bumps when a message waits for the running turn's next model step (a
   * child's `next-step` report), and its value when this plan was made: the driver asks for the
   * message (the gateway's joinMessages) only when the cell moved, so steps cost no round trip otherwise.
   */
  stepCell: optional(sharedCell()),
  stepSeen: optional(int()),
  /** The message the parent already claimed for this activation's first turn (saves a round trip). */
  firstMessage: optional(claim),
  resumeTurn: optional(resumeTurn),
});
export const driverPlan = wire(driverPlanDecl);
export type DriverPlan = Wire<typeof driverPlanDecl>;

/** How an activation ended, as its driver host reports it: it never throws for driver-level failures. */
export const activationOutcomeDecl = tagged('ok', [
  object({ ok: literal(true) }),
  object({
    ok: literal(false),
    error: errorEnvelope,
    /** A queue host's local pool said how the turn stopped (a thread's failures are errors). */
    stopReason: optional(oneOf(['error', 'aborted'])),
    /** A queue host handed the activation back (it lost its thread, or is shutting down): re-plan it. */
    recover: optional(literal(true)),
  }),
]);
export type ActivationOutcome = Wire<typeof activationOutcomeDecl>;
export const activationOutcome = wire(activationOutcomeDecl);

// ——— the gateway: every call a driver makes on its parent ———
/** One gateway method: its arguments in order, and its answer (`nothing` for a method answered for ordering only). */
interface MethodDecl {
  readonly args: WireType<readonly unknown[]>;
  readonly reply: WireType<unknown>;
  /** Sent without waiting for an answer (a `log` frame of the link, not a comlink call). */
  readonly oneWay?: true;
  /** A parent may leave it out; the driver's side then answers `absent` itself, without crossing. */
  readonly absent?: { value: unknown };
}

const method = <const A extends readonly Decl<unknown>[], R>(args: A, reply: WireType<R>) => ({
  args: wire(tuple(args)),
  reply,
});

/**
 * The gateway, declared once: the only door through which a driver reaches policy. Every argument is
 * checked by the parent on arrival and every answer by the driver (src/wire/gateway.ts derives the
 * parent's and the driver's types, the method list, the relay's allow-list and the dispatch from
 * this table). A new method is one entry here plus the parent's implementation (src/agents/gateway.ts).
 */
export const GATEWAY = {
  /** The next message of the agent's inbox to run as a turn, or null: the activation ends. */
  claimNext: method([], claimedMessage),
  refreshView: method([], driverView),
  /** A tool's class for one call (its concurrencySafe is a function: 'dynamic' in the view). */
  classify: method([str(), str()], concurrencyClass),
  executeTool: method([toolCall], toolResult),
  /**
   * A call from inside a run_code program: run host-style (not collapsed by Code Mode) within the
   * program's bounds, answered as the JSON the sandbox takes (src/agents/code-calls.ts).
   */
  callFromCode: method([codeCallDecl], codeCallReply),
  /** The program ended: the parent answers and aborts its outstanding calls and drops their results. */
  endProgram: method([programIdDecl], nothing),
  /**
   * Runs one assistant message's tool calls in the parent, with the SPEC §7.2 pool capped at the
   * parent's maxParallelToolCalls (classified right before each start, `tool/call` and `tool/result`
   * logged there); answers the results in model order. Asked only when the plan says `toolsInParent`.
   */
  runTools: method([toolBatchDecl], toolResults),
  /**
   * Events to log, in order. One-way over a link (ordering on the link keeps it ahead of later calls);
   * a protocol violation in it fails the activation's next call instead.
   */
  log: { ...method([driverEventsDecl], nothing), oneWay: true },
  /**
   * Asked before a model step when the plan's step cell moved: the messages that join the running
   * `turn` now (durably logged as `turn/join` before the answer), possibly none.
   */
  joinMessages: method([int('nonnegative')], joinedMessages),
  /** Ends the turn and claims the next message in the same round trip. */
  endTurn: method([turnReportDecl], claimedMessage),
  /**
   * Only when the plan says `admission`: answers when the parent's scheduler admits the model request
   * about to be made. The response's `assistant/message` log releases it (usage corrects the token
   * estimate); a retry after a 429/503 asks again with the announced pause. A paced provider's grant
   * names the request's slot: the driver sends it then (src/driver/admission.ts). A parent that
   * governs nothing leaves it out: every request is admitted at once.
   */
  admit: { ...method([admitRequestDecl], admitGrant), absent: { value: null } },
  /**
   * A call to an AI SDK model the parent keeps (aiSdkModels' proxied shape): open a request, pull its
   * stream parts in batches, cancel it. The parent checks the call (src/models/ai-sdk/proxy-server.ts)
   * and the adapter that reads the answer checks it (src/models/ai-sdk/proxy-source.ts).
   */
  modelProxy: { ...method([unknown()], anyValue), absent: { value: null } },
} as const satisfies Record<string, MethodDecl>;

type Gateway = typeof GATEWAY;
export type GatewayMethodName = keyof Gateway;
type WireOf<W> = W extends WireType<infer T> ? T : never;
/** A method's arguments, as the declared wire types. */
export type GatewayArgs<M extends GatewayMethodName> = Writable<WireOf<Gateway[M]['args']>>;
type Writable<T> = { -readonly [K in keyof T]: T[K] };
/** A method's answer, as its declared wire type. */
export type GatewayResult<M extends GatewayMethodName> = WireOf<Gateway[M]['reply']>;
/** Methods a parent may leave out. */
export type OptionalGatewayMethod = {
  [M in GatewayMethodName]: Gateway[M] extends { absent: object } ? M : never;
}[GatewayMethodName];
/** Methods that are calls over a link (comlink `rpc` frames), not one-way frames. */
export type GatewayCallName = {
  [M in GatewayMethodName]: Gateway[M] extends { oneWay: true } ? never : M;
}[GatewayMethodName];

/** classify's arguments: the tool's name and the call's arguments as the model wrote them. */
export const classifyArgs = GATEWAY.classify.args;
