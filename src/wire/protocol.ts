/**
 * The one wire protocol between the parent and the places drivers run (pool threads; `brood host`
 * processes over Redis). Every message that crosses is declared here once, with src/declare.ts: its
 * TypeScript type, its fast check (run on every message) and its zod schema (built only to explain a
 * rejection) all derive from that declaration. Objects are loose (unknown keys pass through).
 *
 * Nothing here knows about MessagePort: frames are plain data batched by src/wire/link.ts over any
 * carrier. The one exception is SharedArrayBuffer fields (view version cells, the watch board), which
 * only a thread carrier can move; a process carrier replaces them with their values.
 */
import { z } from 'zod';
import {
  array,
  bool,
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
  str,
  tagged,
  tuple,
  union,
  unknown,
} from '../declare.js';
import { decodeError, encodeError } from '../errors.js';
import { modelRoute } from '../models/route.js';
import { STOP_REASONS } from '../types.js';
import { parseMessage, protocolError, type Wire, type WireType, wire } from './wire-type.js';

export type { Wire, WireType } from './wire-type.js';

// ——— payloads ———
const errorEnvelope = object({ code: str(), message: str(), details: optional(record()) });

const usage = object({
  inputTokens: num('nonnegative'),
  outputTokens: num('nonnegative'),
  cacheReadTokens: optional(num('nonnegative')),
  cacheWriteTokens: optional(num('nonnegative')),
  reasoningTokens: optional(num('nonnegative')),
});

export const concurrencyClass = wire(oneOf(['parallel', 'exclusive']));

const toolSchema = object({ name: str(), description: str(), parameters: record() });

const toolResultDecl = object({
  isError: bool(),
  content: str(),
  value: optional(unknown()),
  error: optional(object({ code: optional(str()), message: str() })),
});
export const toolResult = wire(toolResultDecl);

const driverViewDecl = object({
  system: str(),
  tools: array(toolSchema),
  classes: record(oneOf(['parallel', 'exclusive', 'dynamic'])),
});
export const driverView = wire(driverViewDecl);

/** A message that joins a turn without being its claim (a child's report). */
const joined = object({ messageId: str(), text: str() });
/** modelProxy's answer: checked by the AI SDK adapter that reads it (src/models/ai-sdk/proxy-source.ts). */
export const anyValue = wire(unknown());

/** The answer to joinMessages: what joins the running turn at this step, in order. */
export const joinedMessages = wire(array(joined));

const claim = object({
  turn: int('nonnegative'),
  messageId: str(),
  text: str(),
  aborted: bool(),
  joined: optional(array(joined)),
  /** W3C trace context of the turn's span (telemetry with propagate): the adapter sends it with each request. */
  traceHeaders: optional(record(str())),
});
export const claimedMessage = wire(nullable(claim));

/** joinMessages' argument: the turn the driver is running. */
export const joinTurn = wire(int('nonnegative'));

/** admit's argument: the request about to be made (or retried after a 429/503 with its pause). */
export const admitRequest = wire(
  object({
    provider: str({ min: 1 }),
    tokens: num('nonnegative'),
    retryAfterMs: optional(num('nonnegative')),
    givenBack: optional(bool()),
    claims: optional(bool()),
  }),
);

/**
 * admit's answer: null, or a paced request's slot — `at` on the parent's clock named `clock`
 * (src/wire/clock.ts), granted at `grantedAt` on that clock.
 */
export const admitGrant = wire(nullable(object({ at: num(), grantedAt: num(), clock: str() })));

const toolCall = object({ callId: str({ min: 1 }), name: str({ min: 1 }), arguments: str() });
export const toolCallRequest = wire(toolCall);

/** A run_code program's id: drawn by its driver (a UUID), never chosen by a model. */
const programIdDecl = str({ min: 1, max: 64 });
export const programId = wire(programIdDecl);

/** A call from inside a run_code program, and its answer as the sandbox takes it. */
export const codeCallRequest = wire(extend(toolCall, { program: programIdDecl }));
export const codeCallReply = wire(
  union([
    object({ ok: literal(true), json: str() }),
    object({ ok: literal(true), text: str() }),
    object({ ok: literal(false), message: str() }),
  ]),
);

/** One assistant message's tool calls, handed to the parent to run (SPEC §7.2; the cap is the parent's own). */
export const toolBatch = wire(object({ calls: array(toolCall, { min: 1 }) }));
/** Their results, in model order. */
export const toolResults = wire(array(toolResultDecl));

const driverEventsDecl = array(object({ type: str({ min: 1 }), data: record() }));
export const driverEvents = wire(driverEventsDecl);

export const turnReport = wire(
  object({
    turn: int('nonnegative'),
    output: str(),
    stopReason: oneOf(STOP_REASONS),
    usage,
    diagnostic: optional(str()),
  }),
);

export const classifyArgs = wire(tuple([str(), str()]));

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
  object({ role: literal('user'), text: str() }),
  object({ role: literal('assistant'), text: str(), toolCalls: array(toolCall), reasoning: optional(reasoning) }),
  object({ role: literal('tool'), callId: str(), name: str(), content: str(), isError: bool() }),
]);

const resumeTurn = object({
  turn: int(),
  messageId: str(),
  startedCallIds: array(str()),
  lastFinish: optional(str()),
  interruptedCallIds: optional(array(str())),
});

const driverPlanDecl = object({
  agentId: str(),
  route: modelRoute,
  view: nullable(driverViewDecl),
  history: array(chatMessage),
  ownStart: int('nonnegative'),
  maxParallelToolCalls: int('positive'),
  maxSteps: optional(int('positive')),
  toolsInParent: optional(bool()),
  /** Model requests ask the parent for admission (createBrood `limits` name the route's provider). */
  admission: optional(bool()),
  /** The activation's first model request was admitted with the plan (the parent holds its lease). */
  firstAdmitted: optional(bool()),
  pace: optional(sharedBuffer()),
  credit: optional(sharedBuffer()),
  eventsFlag: optional(sharedBuffer()),
  codeMode: oneOf(['native', 'code', 'both']),
  codeBusyTimeoutMs: num('positive'),
  codeWallTimeoutMs: num('positive'),
  codeLimits,
  versions: array(sharedBuffer()),
  stepCell: optional(sharedBuffer()),
  stepSeen: optional(int()),
  firstMessage: optional(claim),
  resumeTurn: optional(resumeTurn),
});
export const driverPlan = wire(driverPlanDecl);

/** How an activation ended, as its driver host reports it: it never throws for driver-level failures. */
const activationOutcomeDecl = tagged('ok', [
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

// ——— frames: what a link batch carries. `a` is the activation id (the watch-board token). ———
const activation = int('positive');
/** Which host runs an activation (a `brood host` process), as its model/request events record it. */
const hostIdentityDecl = object({ name: str({ max: 256 }), pid: int('nonnegative') });
export type HostIdentity = Wire<typeof hostIdentityDecl>;

/**
 * Parent → driver host. A pool thread gets `init` once per link, before any `start`. A queue host gets
 * its plans as jobs instead (src/queue/job.ts), and, because shared memory cannot cross processes,
 * `cells` (the values of the plan's version cells and events flag, whenever they change), `stop` (a
 * force stop: a thread is recycled instead), `gone` (the parent no longer runs the activation: a stale
 * or duplicate host must drop it), `beat` (the link is alive: a thread's heartbeat is the watch board)
 * and `place` (an activation handed straight to a host that said it has `room`, instead of a job).
 */
const hostFrameDecl = tagged('k', [
  object({ k: literal('init'), board: sharedBuffer() }),
  object({ k: literal('start'), a: activation, plan: driverPlanDecl }),
  object({ k: literal('rpc'), a: activation, m: unknown() }),
  object({ k: literal('cancel'), a: activation, turn: optional(int()) }),
  object({ k: literal('cells'), a: activation, v: array(int()) }),
  object({ k: literal('stop'), a: activation, reason: str() }),
  object({ k: literal('gone'), a: activation }),
  object({ k: literal('beat') }),
  /**
   * A queue activation placed on a host that said it has room: the job it would have been (src/queue/job.ts).
   * `view` numbers the plan's view on this link: the first place of a view carries it and its number,
   * later ones the number alone (the job's view null), so a fan-out's children do not ship it each.
   */
  object({ k: literal('place'), a: activation, job: unknown(), view: optional(int('positive')) }),
]);
export type HostFrame = Wire<typeof hostFrameDecl>;
export const hostFrame = wire(hostFrameDecl);

/**
 * Driver host → parent. `log` is one-way; `end` follows every other frame of its activation. A queue
 * host says `hello` when it takes an activation's job (the parent binds the activation to it then),
 * and `beat` like the parent; `room` invites `place` frames, `full` turns one away.
 */
const parentFrameDecl = tagged('k', [
  object({ k: literal('rpc'), a: activation, m: unknown() }),
  object({ k: literal('log'), a: activation, events: driverEventsDecl }),
  object({ k: literal('end'), a: activation, outcome: activationOutcomeDecl }),
  object({ k: literal('hello'), a: activation, host: hostIdentityDecl }),
  object({ k: literal('beat') }),
  /** A queue host can take `n` more activations from this parent as `place` frames (advisory). */
  object({ k: literal('room'), n: int('nonnegative') }),
  /** A queue host had no room for a placed activation: it never started there (the parent queues it as a job). */
  object({ k: literal('full'), a: activation }),
]);
export type ParentFrame = Wire<typeof parentFrameDecl>;
export const parentFrame = wire(parentFrameDecl);

/**
 * The handshake a pool thread sends on its parentPort once its driver module loaded: the other end
 * of the link it created. (Piscina forwards worker messages to the pool's 'message' event.)
 */
export const LINK_HELLO = 'brood:link';

// ——— RPC replies (comlink turns thrown errors into bare Errors without a code) ———
export type Reply<T> = { ok: true; value: T } | { ok: false; error: Wire<typeof errorEnvelope> };
let replyShape: z.ZodType<{ ok: boolean; value?: unknown; error?: Wire<typeof errorEnvelope> }> | undefined;
const replySchema = () =>
  (replyShape ??= z.object({
    ok: z.boolean(),
    value: z.unknown().optional(),
    error: errorEnvelope.zod().optional(),
  }) as typeof replyShape & object);

export async function replyOf<T>(work: () => Promise<T> | T): Promise<Reply<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: encodeError(error) };
  }
}

/** Validates a reply from the other side and unwraps it, rebuilding a BroodError with its code. */
export function unwrapReply<T>(raw: unknown, value: WireType<T>, what: string): T {
  if (typeof raw === 'object' && raw !== null) {
    const { ok, value: inner, error } = raw as { ok?: unknown; value?: unknown; error?: unknown };
    if (ok === true && value.check(inner)) return inner as T;
    // A refusal (a tool's own error, an abort) is ordinary too: zod only words a malformed reply.
    if (ok === false && errorEnvelope.check(error)) throw decodeError(error as Wire<typeof errorEnvelope>);
  }
  const reply = replySchema().safeParse(raw);
  if (!reply.success) throw protocolError(what, reply.error);
  if (!reply.data.ok) throw decodeError(reply.data.error ?? { code: 'INTERNAL', message: `${what} failed` });
  return parseMessage(value.schema, reply.data.value, what);
}

/** A reply whose value is ignored (one-way calls answered for ordering only). */
export const nothing: WireType<undefined> = {
  get schema() {
    return z.unknown().transform(() => undefined) as unknown as z.ZodType<undefined>;
  },
  check: () => true,
  parse: () => undefined,
};
