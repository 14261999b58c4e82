/**
 * The one wire protocol between the parent and the places drivers run (pool threads today; a socket
 * or a Redis stream for the scale-out work). Every message that crosses is declared here as a zod
 * schema, its TypeScript type inferred from it, and — for every message on a hot path — a hand-written
 * check beside it that gives the same verdict without allocating a parsed copy. The receiver runs the
 * hand check first and falls back to the schema only to explain a rejection. Objects are `loose`
 * (unknown keys pass through) so that the check, which returns its input as-is, and the schema agree
 * on the output too; test/wire/protocol-agreement.test.ts proves both with fast-check.
 *
 * Nothing here knows about MessagePort: frames are plain data batched by src/wire/link.ts over any
 * carrier. The one exception is SharedArrayBuffer fields (view version cells, the watch board), which
 * only a thread carrier can move; a process carrier would replace them with version frames.
 */
import { z } from 'zod';
import { decodeError, encodeError } from '../errors.js';
import {
  arrayOf,
  type Check,
  isBool,
  isInt,
  isNum,
  isObj,
  isReasoningBlock,
  isRecord,
  isStr,
  isToolCall,
  isUsage,
  oneOf,
  optional,
} from '../hand-checks.js';
import { modelRouteShape } from '../models/route.js';
import { STOP_REASONS } from '../types.js';
import { lazy, parseMessage, protocolError, type Wire, type WireType, wire } from './wire-type.js';

export type { Wire, WireType } from './wire-type.js';

const obj = z.looseObject;
const jsonRecord = lazy(() => z.record(z.string(), z.unknown()));
const safeInt = lazy(() => z.number().int());

// ——— payloads ———
const errorEnvelopeSchema = lazy(() =>
  obj({ code: z.string(), message: z.string(), details: jsonRecord().optional() }),
);
const isErrorEnvelope: Check = (v) => isObj(v) && isStr(v.code) && isStr(v.message) && optional(isRecord)(v.details);

const count = lazy(() => z.number().nonnegative());
const usageSchema = lazy(() =>
  obj({
    inputTokens: count(),
    outputTokens: count(),
    cacheReadTokens: count().optional(),
    cacheWriteTokens: count().optional(),
  }),
);

const stopReasonSchema = lazy(() => z.enum(STOP_REASONS));
const concurrencyClassSchema = lazy(() => z.enum(['parallel', 'exclusive']));
export const concurrencyClass = wire(concurrencyClassSchema, oneOf('parallel', 'exclusive'));

const toolSchemaSchema = lazy(() => obj({ name: z.string(), description: z.string(), parameters: jsonRecord() }));
const isToolSchema: Check = (v) => isObj(v) && isStr(v.name) && isStr(v.description) && isRecord(v.parameters);

const toolResultSchema = lazy(() =>
  obj({
    isError: z.boolean(),
    content: z.string(),
    value: z.unknown().optional(),
    error: obj({ code: z.string().optional(), message: z.string() }).optional(),
  }),
);
export const toolResult = wire(
  toolResultSchema,
  (v) =>
    isObj(v) &&
    isBool(v.isError) &&
    isStr(v.content) &&
    optional((e) => isObj(e) && optional(isStr)(e.code) && isStr(e.message))(v.error),
);

const PLANNED_CLASSES = ['parallel', 'exclusive', 'dynamic'] as const;
const driverViewSchema = lazy(() =>
  obj({
    system: z.string(),
    tools: z.array(toolSchemaSchema()),
    classes: z.record(z.string(), z.enum(PLANNED_CLASSES)),
  }),
);
const isDriverView: Check = (v) =>
  isObj(v) &&
  isStr(v.system) &&
  arrayOf(isToolSchema)(v.tools) &&
  isRecord(v.classes) &&
  Object.values(v.classes).every(oneOf(...PLANNED_CLASSES));
export const driverView = wire(driverViewSchema, isDriverView);

/** A message that joins a turn without being its claim (a child's report). */
const joinedSchema = lazy(() => obj({ messageId: z.string(), text: z.string() }));
const isJoined: Check = (v) => isObj(v) && isStr(v.messageId) && isStr(v.text);
/** The answer to joinMessages: what joins the running turn at this step, in order. */
export const joinedMessages = wire(() => z.array(joinedSchema()), arrayOf(isJoined));

const claimSchema = lazy(() =>
  obj({
    turn: safeInt().nonnegative(),
    messageId: z.string(),
    text: z.string(),
    aborted: z.boolean(),
    joined: z.array(joinedSchema()).optional(),
  }),
);
const isClaim: Check = (v) =>
  isObj(v) &&
  isInt(v.turn) &&
  v.turn >= 0 &&
  isStr(v.messageId) &&
  isStr(v.text) &&
  isBool(v.aborted) &&
  optional(arrayOf(isJoined))(v.joined);
const claimedMessageSchema = lazy(() => claimSchema().nullable());
export const claimedMessage = wire(claimedMessageSchema, (v) => v === null || isClaim(v));

/** joinMessages' argument: the turn the driver is running. */
export const joinTurn = wire(
  () => safeInt().nonnegative(),
  (v) => isInt(v) && (v as number) >= 0,
);

/** admit's argument: the request about to be made (or retried after a 429/503 with its pause). */
const admitSchema = lazy(() =>
  obj({
    provider: z.string().min(1),
    tokens: z.number().finite().nonnegative(),
    retryAfterMs: z.number().finite().nonnegative().optional(),
  }),
);
const isFiniteNonNegative = (v: unknown): boolean => isNum(v) && Number.isFinite(v) && (v as number) >= 0;
export const admitRequest = wire(
  admitSchema,
  (v) =>
    isObj(v) &&
    isStr(v.provider) &&
    v.provider !== '' &&
    isFiniteNonNegative(v.tokens) &&
    optional(isFiniteNonNegative)(v.retryAfterMs),
);

const toolCallSchema = lazy(() => obj({ callId: z.string().min(1), name: z.string().min(1), arguments: z.string() }));
export const toolCallRequest = wire(toolCallSchema, isToolCall);

/** A run_code program's id: drawn by its driver (a UUID), never chosen by a model. */
const PROGRAM_ID_MAX = 64;
const programIdSchema = lazy(() => z.string().min(1).max(PROGRAM_ID_MAX));
const isProgramId: Check = (v) => isStr(v) && v.length > 0 && v.length <= PROGRAM_ID_MAX;
export const programId = wire(programIdSchema, isProgramId);

/** A call from inside a run_code program, and its answer as the sandbox takes it. */
const codeCallSchema = lazy(() => toolCallSchema().extend({ program: programIdSchema() }));
export const codeCallRequest = wire(
  codeCallSchema,
  (v) => isToolCall(v) && isProgramId((v as { program?: unknown }).program),
);
const codeCallReplySchema = lazy(() =>
  z.union([
    obj({ ok: z.literal(true), json: z.string() }),
    obj({ ok: z.literal(true), text: z.string() }),
    obj({ ok: z.literal(false), message: z.string() }),
  ]),
);
export const codeCallReply = wire(
  codeCallReplySchema,
  (v) => isObj(v) && ((v.ok === true && (isStr(v.json) || isStr(v.text))) || (v.ok === false && isStr(v.message))),
);

/** One assistant message's tool calls, handed to the parent to run (SPEC §7.2; the cap is the parent's own). */
const toolBatchSchema = lazy(() => obj({ calls: z.array(toolCallSchema()).min(1) }));
export const toolBatch = wire(
  toolBatchSchema,
  (v) => isObj(v) && arrayOf(isToolCall)(v.calls) && (v.calls as unknown[]).length > 0,
);
/** Their results, in model order. */
export const toolResults = wire(() => z.array(toolResultSchema()), arrayOf(toolResult.check));

const driverEventSchema = lazy(() => obj({ type: z.string().min(1), data: jsonRecord() }));
const driverEventsSchema = lazy(() => z.array(driverEventSchema()));
export const driverEvents = wire(
  driverEventsSchema,
  arrayOf((v) => isObj(v) && isStr(v.type) && v.type !== '' && isRecord(v.data)),
);

const turnReportSchema = lazy(() =>
  obj({
    turn: safeInt().nonnegative(),
    output: z.string(),
    stopReason: stopReasonSchema(),
    usage: usageSchema(),
    diagnostic: z.string().optional(),
  }),
);
export const turnReport = wire(
  turnReportSchema,
  (v) =>
    isObj(v) &&
    isInt(v.turn) &&
    v.turn >= 0 &&
    isStr(v.output) &&
    oneOf(...STOP_REASONS)(v.stopReason) &&
    isUsage(v.usage) &&
    optional(isStr)(v.diagnostic),
);

export const classifyArgs = wire(
  () => z.tuple([z.string(), z.string()]),
  (v) => Array.isArray(v) && v.length === 2 && isStr(v[0]) && isStr(v[1]),
);

// ——— the plan (sent once per activation, after setup) ———
const codeLimitsSchema = lazy(() =>
  obj({
    memoryMb: safeInt().positive(),
    stackKb: safeInt().positive(),
    maxOutputBytes: safeInt().positive(),
    maxToolCalls: safeInt().positive(),
  }),
);
const isPositiveInt = (n: unknown): boolean => isInt(n) && n > 0;
const isCodeLimits: Check = (v) =>
  isObj(v) &&
  isPositiveInt(v.memoryMb) &&
  isPositiveInt(v.stackKb) &&
  isPositiveInt(v.maxOutputBytes) &&
  isPositiveInt(v.maxToolCalls);
const routeSchema = lazy(() => obj(modelRouteShape));
const isRoute: Check = (v) =>
  isObj(v) &&
  isStr(v.provider) &&
  isStr(v.model) &&
  optional(isStr)(v.reasoningEffort) &&
  optional((n) => isInt(n) && n > 0)(v.maxTokens);

/** Provider reasoning blocks replayed with an assistant message (src/models/reasoning.ts, loose here like every wire object). */
const reasoningSchema = lazy(() =>
  z.array(
    z.union([
      obj({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
      obj({ type: z.literal('redacted_thinking'), data: z.string() }),
    ]),
  ),
);

const chatMessageSchema = lazy(() =>
  z.discriminatedUnion('role', [
    obj({ role: z.literal('user'), text: z.string() }),
    obj({
      role: z.literal('assistant'),
      text: z.string(),
      toolCalls: z.array(toolCallSchema()),
      reasoning: reasoningSchema().optional(),
    }),
    obj({ role: z.literal('tool'), callId: z.string(), name: z.string(), content: z.string(), isError: z.boolean() }),
  ]),
);
function isChatMessage(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.role === 'user') return isStr(v.text);
  if (v.role === 'assistant')
    return isStr(v.text) && arrayOf(isToolCall)(v.toolCalls) && optional(arrayOf(isReasoningBlock))(v.reasoning);
  return v.role === 'tool' && isStr(v.callId) && isStr(v.name) && isStr(v.content) && isBool(v.isError);
}

const resumeTurnSchema = lazy(() =>
  obj({
    turn: safeInt(),
    messageId: z.string(),
    startedCallIds: z.array(z.string()),
    lastFinish: z.string().optional(),
  }),
);
const isResumeTurn: Check = (v) =>
  isObj(v) && isInt(v.turn) && isStr(v.messageId) && arrayOf(isStr)(v.startedCallIds) && optional(isStr)(v.lastFinish);
const isSab = (v: unknown): boolean => v instanceof SharedArrayBuffer;

const driverPlanSchema = lazy(() =>
  obj({
    agentId: z.string(),
    route: routeSchema(),
    view: driverViewSchema().nullable(),
    history: z.array(chatMessageSchema()),
    ownStart: safeInt().nonnegative(),
    maxParallelToolCalls: safeInt().positive(),
    maxSteps: safeInt().positive().optional(),
    toolsInParent: z.boolean().optional(),
    admission: z.boolean().optional(),
    eventsFlag: z.instanceof(SharedArrayBuffer).optional(),
    codeMode: z.enum(['native', 'code', 'both']),
    codeBusyTimeoutMs: z.number().positive(),
    codeWallTimeoutMs: z.number().positive(),
    codeLimits: codeLimitsSchema(),
    versions: z.array(z.instanceof(SharedArrayBuffer)),
    stepCell: z.instanceof(SharedArrayBuffer).optional(),
    stepSeen: safeInt().optional(),
    firstMessage: claimSchema().optional(),
    resumeTurn: resumeTurnSchema().optional(),
  }),
);
export const driverPlan = wire(
  driverPlanSchema,
  (v) =>
    isObj(v) &&
    isStr(v.agentId) &&
    isRoute(v.route) &&
    (v.view === null || isDriverView(v.view)) &&
    arrayOf(isChatMessage)(v.history) &&
    isInt(v.ownStart) &&
    v.ownStart >= 0 &&
    isInt(v.maxParallelToolCalls) &&
    v.maxParallelToolCalls > 0 &&
    optional((n) => isInt(n) && n > 0)(v.maxSteps) &&
    optional(isBool)(v.toolsInParent) &&
    optional(isBool)(v.admission) &&
    optional(isSab)(v.eventsFlag) &&
    oneOf('native', 'code', 'both')(v.codeMode) &&
    isNum(v.codeBusyTimeoutMs) &&
    v.codeBusyTimeoutMs > 0 &&
    isNum(v.codeWallTimeoutMs) &&
    v.codeWallTimeoutMs > 0 &&
    isCodeLimits(v.codeLimits) &&
    arrayOf(isSab)(v.versions) &&
    optional(isSab)(v.stepCell) &&
    optional(isInt)(v.stepSeen) &&
    optional(isClaim)(v.firstMessage) &&
    optional(isResumeTurn)(v.resumeTurn),
);

/** How an activation ended, as its driver host reports it: it never throws for driver-level failures. */
const activationOutcomeSchema = lazy(() =>
  z.discriminatedUnion('ok', [
    obj({ ok: z.literal(true) }),
    obj({ ok: z.literal(false), error: errorEnvelopeSchema() }),
  ]),
);
export type ActivationOutcome = Wire<z.infer<ReturnType<typeof activationOutcomeSchema>>>;
const isOutcome: Check = (v) => isObj(v) && (v.ok === true || (v.ok === false && isErrorEnvelope(v.error)));
export const activationOutcome = wire(activationOutcomeSchema, isOutcome);

// ——— frames: what a link batch carries. `a` is the activation id (the watch-board token). ———
/** Parent → driver host. `init` comes once per link, before any `start`. */
const hostFrameSchema = lazy(() =>
  z.discriminatedUnion('k', [
    obj({ k: z.literal('init'), board: z.instanceof(SharedArrayBuffer) }),
    obj({ k: z.literal('start'), a: safeInt().positive(), plan: driverPlanSchema() }),
    obj({ k: z.literal('rpc'), a: safeInt().positive(), m: z.unknown() }),
    obj({ k: z.literal('cancel'), a: safeInt().positive(), turn: safeInt().optional() }),
  ]),
);
export type HostFrame = Wire<z.infer<ReturnType<typeof hostFrameSchema>>>;

/** Driver host → parent. `log` is one-way; `end` follows every other frame of its activation. */
const parentFrameSchema = lazy(() =>
  z.discriminatedUnion('k', [
    obj({ k: z.literal('rpc'), a: safeInt().positive(), m: z.unknown() }),
    obj({ k: z.literal('log'), a: safeInt().positive(), events: driverEventsSchema() }),
    obj({ k: z.literal('end'), a: safeInt().positive(), outcome: activationOutcomeSchema() }),
  ]),
);
export type ParentFrame = Wire<z.infer<ReturnType<typeof parentFrameSchema>>>;

const hasActivation = (v: Record<string, unknown>): boolean => isInt(v.a) && v.a > 0;
/** Shape of the frame only; a `start` plan is checked by driverPlan, a `log` by driverEvents (where they are used). */
export const hostFrame = wire(hostFrameSchema, (v) => {
  if (!isObj(v)) return false;
  if (v.k === 'init') return isSab(v.board);
  if (!hasActivation(v)) return false;
  if (v.k === 'start') return driverPlan.check(v.plan);
  if (v.k === 'cancel') return optional(isInt)(v.turn);
  return v.k === 'rpc' && 'm' in v;
});
export const parentFrame = wire(parentFrameSchema, (v) => {
  if (!isObj(v) || !hasActivation(v)) return false;
  if (v.k === 'log') return driverEvents.check(v.events);
  if (v.k === 'end') return isOutcome(v.outcome);
  return v.k === 'rpc' && 'm' in v;
});

/**
 * The handshake a pool thread sends on its parentPort once its driver module loaded: the other end
 * of the link it created. (Piscina forwards worker messages to the pool's 'message' event.)
 */
export const LINK_HELLO = 'brood:link';

// ——— RPC replies (comlink turns thrown errors into bare Errors without a code) ———
export type Reply<T> =
  | { ok: true; value: T }
  | { ok: false; error: Wire<z.infer<ReturnType<typeof errorEnvelopeSchema>>> };
const replyShape = lazy(() =>
  z.object({ ok: z.boolean(), value: z.unknown().optional(), error: errorEnvelopeSchema().optional() }),
);

export async function replyOf<T>(work: () => Promise<T> | T): Promise<Reply<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: encodeError(error) };
  }
}

/** Validates a reply from the other side and unwraps it, rebuilding a BroodError with its code. */
export function unwrapReply<T>(raw: unknown, value: WireType<T>, what: string): T {
  if (isObj(raw) && raw.ok === true && value.check(raw.value)) return raw.value as T;
  const reply = replyShape().safeParse(raw);
  if (!reply.success) throw protocolError(what, reply.error);
  if (!reply.data.ok) throw decodeError(reply.data.error ?? { code: 'INTERNAL', message: `${what} failed` });
  return parseMessage(value.schema, reply.data.value, what);
}

/** A reply whose value is ignored (one-way calls answered for ordering only). */
const ignored = lazy(() => z.unknown().transform(() => undefined));
export const nothing: WireType<undefined> = {
  get schema() {
    return ignored();
  },
  check: () => true,
  parse: () => undefined,
};
