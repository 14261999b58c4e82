/**
 * The whole parent <-> worker vocabulary, with runtime validation. The worker is not trusted to send
 * well-formed data (a buggy adapter or a dying thread may send anything), so every message that
 * arrives from the other side is parsed here before it is used. Same-process typed calls are trusted.
 */
import { MessagePort } from 'node:worker_threads';
import { z } from 'zod';
import { BroodError, decodeError, encodeError, type ErrorEnvelope } from '../errors.js';
import { reasoningBlocksSchema } from '../models/reasoning.js';
import { isPlainObject } from '../plain.js';

const jsonRecord = z.record(z.string(), z.unknown());

export const errorEnvelopeSchema = z.object({
  code: z.string(),
  message: z.string(),
  details: jsonRecord.optional(),
});

export const usageSchema = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  cacheReadTokens: z.number().nonnegative().optional(),
  cacheWriteTokens: z.number().nonnegative().optional(),
});
export const stopReasonSchema = z.enum(['completed', 'aborted', 'error', 'max-tokens', 'refusal', 'max-steps']);
export const concurrencyClassSchema = z.enum(['parallel', 'exclusive']);

export const toolSchemaSchema = z.object({ name: z.string(), description: z.string(), parameters: jsonRecord });

export const toolResultSchema = z.object({
  isError: z.boolean(),
  content: z.string(),
  value: z.unknown().optional(),
  error: z.object({ code: z.string().optional(), message: z.string() }).optional(),
});

export const driverViewSchema = z.object({
  system: z.string(),
  tools: z.array(toolSchemaSchema),
  classes: z.record(z.string(), z.enum(['parallel', 'exclusive', 'dynamic'])),
});

export const claimedMessageSchema = z
  .object({ turn: z.number().int().nonnegative(), messageId: z.string(), text: z.string(), aborted: z.boolean() })
  .nullable();

export const toolCallSchema = z.object({ callId: z.string().min(1), name: z.string().min(1), arguments: z.string() });
export const toolCallRequestSchema = toolCallSchema.extend({ origin: z.enum(['model', 'code']).optional() });

export const driverEventSchema = z.object({ type: z.string().min(1), data: jsonRecord });
export const driverEventsSchema = z.array(driverEventSchema);

export const turnReportSchema = z.object({
  turn: z.number().int().nonnegative(),
  output: z.string(),
  stopReason: stopReasonSchema,
  usage: usageSchema,
  diagnostic: z.string().optional(),
});

export const classifyArgsSchema = z.tuple([z.string(), z.string()]);

export const driverControlSchema = z.object({ control: z.literal('cancel'), turn: z.number().int().optional() });

const routeSchema = z.object({
  provider: z.string(),
  model: z.string(),
  reasoningEffort: z.string().optional(),
  maxTokens: z.number().int().positive().optional(),
});

const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), text: z.string() }),
  z.object({ role: z.literal('assistant'), text: z.string(), toolCalls: z.array(toolCallSchema), reasoning: reasoningBlocksSchema.optional() }),
  z.object({ role: z.literal('tool'), callId: z.string(), name: z.string(), content: z.string(), isError: z.boolean() }),
]);

export const driverPlanSchema = z.object({
  agentId: z.string(),
  route: routeSchema,
  view: driverViewSchema.nullable(),
  history: z.array(chatMessageSchema),
  ownStart: z.number().int().nonnegative(),
  maxParallelToolCalls: z.number().int().positive(),
  maxSteps: z.number().int().positive().optional(),
  eventsFlag: z.instanceof(SharedArrayBuffer).optional(),
  codeMode: z.enum(['native', 'code', 'both']),
  codeBusyTimeoutMs: z.number().positive(),
  codeWallTimeoutMs: z.number().positive(),
  versions: z.array(z.instanceof(SharedArrayBuffer)),
  firstMessage: claimedMessageSchema.unwrap().optional(),
  resumeTurn: z.object({ turn: z.number().int(), messageId: z.string(), startedCallIds: z.array(z.string()), lastFinish: z.string().optional() }).optional(),
  watch: z
    .object({ board: z.instanceof(SharedArrayBuffer), token: z.number().int(), threadCell: z.instanceof(SharedArrayBuffer) })
    .optional(),
});

export const driverTaskSchema = z.object({ plan: driverPlanSchema, port: z.instanceof(MessagePort) });

/** What a driver task resolves with: it never rejects for driver-level failures. */
export const activationOutcomeSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), error: errorEnvelopeSchema }),
]);
export type ActivationOutcome = z.infer<typeof activationOutcomeSchema>;

/** Gateway replies are envelopes, because comlink turns thrown errors into bare Errors without a code. */
export type Reply<T> = { ok: true; value: T } | { ok: false; error: ErrorEnvelope };

export async function replyOf<T>(work: () => Promise<T> | T): Promise<Reply<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: encodeError(error) };
  }
}

const replyShape = z.object({ ok: z.boolean(), value: z.unknown().optional(), error: errorEnvelopeSchema.optional() });

/** Hand-written checks for the replies a driver receives most; anything else (or a failure) goes through zod. */
const QUICK_REPLY_CHECKS = new Map<z.ZodType, (value: unknown) => boolean>([
  [toolResultSchema, isQuickToolResult],
]);

function isQuickToolResult(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const result = value as { isError?: unknown; content?: unknown; error?: unknown };
  if (typeof result.isError !== 'boolean' || typeof result.content !== 'string') return false;
  if (result.error === undefined) return true;
  const error = result.error as { code?: unknown; message?: unknown } | null;
  return typeof error === 'object' && error !== null && typeof error.message === 'string' && (error.code === undefined || typeof error.code === 'string');
}

/** Validates a reply from the other side and unwraps it, rebuilding a BroodError with its code. */
export function unwrapReply<T>(raw: unknown, valueSchema: z.ZodType<T>, what: string): T {
  const quick = QUICK_REPLY_CHECKS.get(valueSchema);
  const candidate = raw as { ok?: unknown; value?: unknown } | null;
  if (quick && typeof candidate === 'object' && candidate !== null && candidate.ok === true && quick(candidate.value)) {
    return candidate.value as T;
  }
  const reply = replyShape.safeParse(raw);
  if (!reply.success) throw protocolError(what, reply.error);
  if (!reply.data.ok) throw decodeError(reply.data.error ?? { code: 'INTERNAL', message: `${what} failed` });
  const value = valueSchema.safeParse(reply.data.value);
  if (!value.success) throw protocolError(what, value.error);
  return value.data;
}

/**
 * The two messages every driver sends most (event batches, tool calls), checked by hand first: zod
 * would allocate a parsed copy of every batch on the parent's hot path. A message that fails the quick
 * check goes through the schema, so a rejection still explains itself.
 */
export function parseEvents(raw: unknown): z.infer<typeof driverEventsSchema> {
  if (Array.isArray(raw) && raw.every(isWellFormedEvent)) return raw as z.infer<typeof driverEventsSchema>;
  return parseMessage(driverEventsSchema, raw, 'log');
}

export function parseToolCall(raw: unknown): z.infer<typeof toolCallRequestSchema> {
  const call = raw as Partial<Record<'callId' | 'name' | 'arguments' | 'origin', unknown>> | null;
  const quick =
    typeof call === 'object' && call !== null &&
    typeof call.callId === 'string' && call.callId !== '' &&
    typeof call.name === 'string' && call.name !== '' &&
    typeof call.arguments === 'string' &&
    (call.origin === undefined || call.origin === 'model' || call.origin === 'code');
  return quick ? (call as z.infer<typeof toolCallRequestSchema>) : parseMessage(toolCallRequestSchema, raw, 'executeTool');
}

function isWellFormedEvent(event: unknown): boolean {
  if (typeof event !== 'object' || event === null) return false;
  const { type, data } = event as { type?: unknown; data?: unknown };
  return typeof type === 'string' && type !== '' && isPlainObject(data);
}

/** Parses a message from the other side; failures are INTERNAL protocol errors naming the message. */
export function parseMessage<T>(schema: z.ZodType<T>, raw: unknown, what: string): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw protocolError(what, parsed.error);
  return parsed.data;
}

function protocolError(what: string, error: z.ZodError): BroodError {
  return new BroodError('INTERNAL', `malformed ${what} message: ${z.prettifyError(error)}`);
}
