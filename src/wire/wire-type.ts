/**
 * What a wire message is (src/wire/protocol.ts declares them all): a zod schema, built on first
 * use, with the TypeScript type inferred from it and a hand-written check beside it.
 */
import { z } from 'zod';
import { BroodError } from '../errors.js';
import type { Check } from '../hand-checks.js';

/** A wire message: its schema, its hand check, and a parser that tries the check first. */
export interface WireType<T> {
  readonly schema: z.ZodType<T>;
  readonly check: (value: unknown) => boolean;
  parse(raw: unknown, what: string): T;
}

/**
 * The TypeScript type of a wire message: what zod infers, minus the index signature `looseObject`
 * adds (extra keys may arrive and pass through, but no code reads them). Records keep theirs.
 */
export type Wire<T> = T extends SharedArrayBuffer
  ? T
  : T extends readonly unknown[]
    ? { [K in keyof T]: Wire<T[K]> }
    : T extends object
      ? [keyof { [K in keyof T as string extends K ? never : K]: 0 }] extends [never]
        ? T
        : { [K in keyof T as string extends K ? never : K]: Wire<T[K]> }
      : T;

/**
 * A schema built on first use. Every pool thread imports the protocol at boot, where building its
 * ~220 zod schemas was most of the bundle's module init; receivers need them only to explain a
 * rejection (the hand checks decide), which is rare. (With the lazily loaded adapters,
 * src/models/adapters.ts: the thread bundle's init went from 530 schema constructions and ~28 ms
 * to 68 and ~14 ms, alternating runs on the 2-core machine.)
 */
export function lazy<S extends z.ZodType>(build: () => S): () => S {
  let built: S | undefined;
  return () => (built ??= build());
}

/** A wire message from its schema's builder (run once, on first use) and its hand check. */
export function wire<S extends z.ZodType>(build: () => S, check: Check): WireType<Wire<z.infer<S>>> {
  type T = Wire<z.infer<S>>;
  const schema = lazy(build);
  return {
    get schema() {
      return schema() as unknown as z.ZodType<T>;
    },
    check,
    parse: (raw, what) => (check(raw) ? (raw as T) : (parseMessage(schema(), raw, what) as T)),
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
