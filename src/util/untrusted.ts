/**
 * What a host hands a public entry point (an options object, a request, a tool definition, a provider)
 * is read by running the host's code: getters and proxy traps. Whatever that code throws is a refusal
 * of the input with a specific code — INVALID_CONFIG for configuration, INVALID_ARGS for one call's
 * arguments — never a raw Error escaping the entry point. Entry points read their input through these
 * helpers only; what they keep is a copy, so a getter cannot answer differently later.
 */
import type { z } from 'zod';
import { BroodError, errorMessage } from '../errors.js';

export type RefusalCode = 'INVALID_CONFIG' | 'INVALID_ARGS';

/**
 * Runs `read` over a host's input. A BroodError it throws is a validation's own answer and passes
 * through; anything else (a getter, a proxy trap, a revoked proxy) becomes one refusal naming `what`.
 */
export function readUntrusted<T>(code: RefusalCode, what: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isBroodError(error)) throw error;
    throw new BroodError(code, `${what} could not be read: ${errorMessage(error)}`);
  }
}

/**
 * zod's safeParse under readUntrusted. zod's output is its own copy of the data it validated (each
 * getter read once, here); references it passes through (z.custom: stores, providers, signals) are
 * the host's objects, read later only under their own guards.
 */
export function parseUntrusted<T>(
  schema: z.ZodType<T>,
  value: unknown,
  code: RefusalCode,
  what: string,
): z.ZodSafeParseResult<T> {
  return readUntrusted(code, what, () => schema.safeParse(value));
}

/**
 * Parses a host's input with a schema, turning every violation — and anything its getters or proxy
 * traps throw — into one INVALID_CONFIG (INVALID_ARGS for a call's arguments) that names the keys.
 */
export function parseConfig<T>(
  schema: z.ZodType<T>,
  value: unknown,
  what: string,
  code: RefusalCode = 'INVALID_CONFIG',
): T {
  const parsed = parseUntrusted(schema, value ?? {}, code, what);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`,
  );
  throw new BroodError(code, `invalid ${what}: ${problems.join('; ')}`, {
    details: { keys: parsed.error.issues.map((issue) => issue.path.join('.')) },
  });
}

/**
 * A copy of a host's input made of its plain data: plain objects (and proxies that present
 * themselves as one) and arrays are copied key by key, all the way down; anything else (an agent,
 * an AbortSignal, a zod schema, a function) is kept by reference. Every getter and trap of the data
 * runs once, here, under readUntrusted.
 */
export function snapshot<T>(code: RefusalCode, what: string, value: T): T {
  return readUntrusted(code, what, () => copyData(value, new Map()) as T);
}

function copyData(value: unknown, copies: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    copies.set(value, copy);
    for (let index = 0; index < value.length; index++) copy.push(copyData(value[index], copies));
    return copy;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  copies.set(value, copy);
  for (const key of Object.keys(value)) {
    // Defined, not assigned: an own "__proto__" key (JSON.parse makes them) stays data.
    const data = copyData((value as Record<string, unknown>)[key], copies);
    Object.defineProperty(copy, key, { value: data, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

function isBroodError(error: unknown): error is BroodError {
  try {
    return error instanceof BroodError;
  } catch {
    return false; // a thrown Proxy whose getPrototypeOf trap throws
  }
}
