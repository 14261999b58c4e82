/**
 * What a wire message is (src/wire/protocol.ts declares them all, with src/declare.ts): one
 * declaration from which its TypeScript type, its fast check and its zod schema all derive.
 */
import { z } from 'zod';
import type { Decl, Infer } from '../declare.js';
import { BroodError } from '../errors.js';

/** A wire message: its schema, its fast check, and a parser that tries the check first. */
export interface WireType<T> {
  readonly schema: z.ZodType<T>;
  readonly check: (value: unknown) => boolean;
  parse(raw: unknown, what: string): T;
}

/** The TypeScript type of a declared wire message. */
export type Wire<D> = Infer<D>;

/**
 * A wire message from its declaration. The schema is built on first use: every pool thread imports
 * the protocol at boot, and receivers need zod only to explain a rejection (the check decides), which
 * is rare.
 */
export function wire<D extends Decl<unknown>>(decl: D): WireType<Infer<D>> {
  type T = Infer<D>;
  const check = decl.check;
  return {
    get schema() {
      return decl.zod() as z.ZodType<T>;
    },
    check,
    parse: (raw, what) => (check(raw) ? (raw as T) : (parseMessage(decl.zod(), raw, what) as T)),
  };
}

/** Parses a message from the other side; failures are INTERNAL protocol errors naming the message. */
export function parseMessage<T>(schema: z.ZodType<T>, raw: unknown, what: string): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw protocolError(what, parsed.error);
  return parsed.data;
}

export function protocolError(what: string, error: z.ZodError): BroodError {
  return new BroodError('INTERNAL', `malformed ${what} message: ${z.prettifyError(error)}`);
}
