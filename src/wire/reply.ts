/**
 * The envelope every gateway answer crosses in: comlink turns a thrown error into a bare Error
 * without a code, so the parent answers `{ ok, value }` or `{ ok: false, error }` and the driver's
 * side rebuilds the BroodError, code and all.
 */
import { z } from 'zod';
import { object, optional, record, str } from '../declare.js';
import { decodeError, encodeError } from '../errors.js';
import { parseMessage, protocolError, type Wire, type WireType } from './wire-type.js';

export const errorEnvelope = object({ code: str(), message: str(), details: optional(record()) });

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
export const nothing: WireType<void> = {
  get schema() {
    return z.unknown().transform(() => undefined) as unknown as z.ZodType<void>;
  },
  check: () => true,
  parse: () => undefined,
};
