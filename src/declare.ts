/**
 * A small declaration language for plain-data messages (the wire protocol, src/wire/protocol.ts).
 * Each message is declared once, with these builders; three things derive from that one declaration:
 *
 * - its TypeScript type (`Infer<typeof decl>`),
 * - a fast check, compiled once at declaration time into straight-line JavaScript (literal property
 *   names, scalar rules inlined: what a careful hand-written check does, without the hand copy; a
 *   composition of closures measured 2.3–6.5× slower than the hand checks it replaces), run by the
 *   receiver on every message,
 * - a zod schema, built on first use only, which words the reason when the check refuses.
 *
 * Both derive from the same rules, so they cannot drift apart the way a hand-kept check beside a
 * schema could (test/unit/wire/protocol-agreement.test.ts holds them to each other on arbitrary and
 * mutated messages). Objects are loose, as zod's `looseObject`: unknown keys pass through, so the
 * check, which returns its input as-is, and the schema agree on the output too.
 */
import { z } from 'zod';

export type Check = (value: unknown) => boolean;

/** One declared value: its fast check and its zod schema (built once, on first use). */
export interface Decl<T> {
  readonly check: Check;
  /**
   * The check as a JavaScript expression over the expression `value` (which must be side-effect free:
   * it may be evaluated more than once); `use` names a function the expression may call.
   */
  readonly inline: (value: string, use: (fn: Check) => string) => string;
  zod(): z.ZodType;
  /** A required key whose check passes `undefined` (unknown) must still be present, as zod requires. */
  readonly mayBeUndefined?: boolean;
  /** Phantom: carries the declared type; never set. */
  readonly __type?: T;
}

/** An object key that may be absent (or `undefined`). */
export interface Optional<T> extends Decl<T | undefined> {
  readonly optional: true;
}

export type Infer<D> = D extends Decl<infer T> ? T : never;

type Shape = Record<string, Decl<unknown>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type RequiredKeys<S extends Shape> = { [K in keyof S]: S[K] extends Optional<unknown> ? never : K }[keyof S];
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends Optional<unknown> ? K : never }[keyof S];
export type ObjectOf<S extends Shape> = Simplify<
  { [K in RequiredKeys<S>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Exclude<Infer<S[K]>, undefined> }
>;

export interface ObjectDecl<S extends Shape> extends Decl<ObjectOf<S>> {
  readonly shape: S;
}

type Inline = Decl<unknown>['inline'];

function declare<T>(
  check: Check,
  build: () => z.ZodType,
  extra: { inline?: Inline } & Record<string, unknown> = {},
): Decl<T> {
  let built: z.ZodType | undefined;
  const inline: Inline = extra.inline ?? ((value, use) => `${use(check)}(${value})`);
  return { check, zod: () => (built ??= build()), ...extra, inline };
}

/** Declares a scalar by its inline rule alone; its check is that rule compiled. */
function scalar<T>(rule: (value: string) => string, build: () => z.ZodType, extra: Record<string, unknown> = {}) {
  return declare<T>(compile(['v'], `return ${rule('v')};`, []), build, { ...extra, inline: (value) => rule(value) });
}

/**
 * Compiles a check from generated source. Only this module writes the source, from declarations in
 * code (key names and literals are embedded with JSON.stringify); nothing from a message reaches it.
 */
function compile(params: string[], body: string, used: Check[]): Check {
  const names = used.map((_, index) => `f${index}`);
  return new Function(...names, `return function check(${params.join(', ')}) { ${body} };`)(...used) as Check;
}

/** Collects the functions an inline expression calls, naming them f0, f1, … */
function collector(): { use: (fn: Check) => string; used: Check[] } {
  const used: Check[] = [];
  return {
    used,
    use: (fn) => {
      let index = used.indexOf(fn);
      if (index < 0) index = used.push(fn) - 1;
      return `f${index}`;
    },
  };
}

const property = (value: string, key: string): string => `${value}[${JSON.stringify(key)}]`;

export const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** zod's record rule: a plain object (a null prototype, or an Object-like constructor). */
function isRecord(v: unknown): v is Record<string, unknown> {
  if (!isObj(v)) return false;
  const ctor = (v as { constructor?: unknown }).constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const proto = (ctor as { prototype?: unknown }).prototype;
  return isObj(proto) && Object.hasOwn(proto, 'isPrototypeOf');
}

// ——— scalars ———
export function str(limits: { min?: number; max?: number } = {}): Decl<string> {
  const { min = 0, max } = limits;
  const bounds = (value: string): string =>
    (min > 0 ? ` && ${value}.length >= ${min}` : '') + (max === undefined ? '' : ` && ${value}.length <= ${max}`);
  return scalar(
    (value) => `(typeof ${value} === "string"${bounds(value)})`,
    () => {
      let schema = z.string();
      if (min > 0) schema = schema.min(min);
      if (max !== undefined) schema = schema.max(max);
      return schema;
    },
  );
}

const SIGN_RULES = { positive: '> 0', nonnegative: '>= 0' } as const;
type Sign = keyof typeof SIGN_RULES;
const signRule = (value: string, sign?: Sign): string => (sign ? ` && ${value} ${SIGN_RULES[sign]}` : '');

/** A finite number; `positive` (> 0) or `nonnegative` (≥ 0). */
export function num(sign?: Sign): Decl<number> {
  return scalar(
    (value) => `(typeof ${value} === "number" && Number.isFinite(${value})${signRule(value, sign)})`,
    () => (sign ? z.number()[sign]() : z.number()),
  );
}

/** A safe integer; `positive` (> 0) or `nonnegative` (≥ 0). */
export function int(sign?: Sign): Decl<number> {
  return scalar(
    (value) => `(Number.isSafeInteger(${value})${signRule(value, sign)})`,
    () => (sign ? z.number().int()[sign]() : z.number().int()),
  );
}

export const bool = (): Decl<boolean> =>
  scalar(
    (value) => `(typeof ${value} === "boolean")`,
    () => z.boolean(),
  );

export const unknown = (): Decl<unknown> =>
  scalar(
    () => 'true',
    () => z.unknown(),
    { mayBeUndefined: true },
  );

export const sharedBuffer = (): Decl<SharedArrayBuffer> =>
  scalar(
    (value) => `(${value} instanceof SharedArrayBuffer)`,
    () => z.instanceof(SharedArrayBuffer),
  );

/** One Int32 in shared memory, as a version cell crosses to a driver (src/wire/version-cell.ts). */
export const sharedCell = (): Decl<Int32Array> =>
  scalar(
    (value) =>
      `(${value} instanceof Int32Array && ${value}.length === 1 && ${value}.buffer instanceof SharedArrayBuffer)`,
    () =>
      z.custom<Int32Array>(
        (value) => value instanceof Int32Array && value.length === 1 && value.buffer instanceof SharedArrayBuffer,
        'expected one Int32 over shared memory',
      ),
  );

export interface LiteralDecl<T> extends Decl<T> {
  readonly value: T;
}
export function literal<const T extends string | number | boolean>(value: T): LiteralDecl<T> {
  return scalar<T>(
    (v) => `(${v} === ${JSON.stringify(value)})`,
    () => z.literal(value),
    { value },
  ) as LiteralDecl<T>;
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T): Decl<T[number]> {
  return scalar(
    (value) => `(${values.map((each) => `${value} === ${JSON.stringify(each)}`).join(' || ')})`,
    () => z.enum(values),
  );
}

// ——— wrappers ———
export function optional<T>(inner: Decl<T>): Optional<T> {
  const check = inner.check;
  return declare<T | undefined>(
    (v) => v === undefined || check(v),
    () => inner.zod().optional(),
    {
      optional: true,
      inline: (value, use) => `(${value} === undefined || ${inner.inline(value, use)})`,
    },
  ) as Optional<T>;
}

export function nullable<T>(inner: Decl<T>): Decl<T | null> {
  const check = inner.check;
  return declare(
    (v) => v === null || check(v),
    () => inner.zod().nullable(),
    {
      inline: (value, use) => `(${value} === null || ${inner.inline(value, use)})`,
    },
  );
}

// ——— containers ———
/** Index by index, like zod: a hole in a sparse array (which structured clone keeps) is `undefined`. */
export function array<T>(item: Decl<T>, limits: { min?: number } = {}): Decl<T[]> {
  const min = limits.min ?? 0;
  const { use, used } = collector();
  const body = `if (!Array.isArray(v) || v.length < ${min}) return false;
    for (let i = 0; i < v.length; i += 1) { const x = v[i]; if (!${item.inline('x', use)}) return false; }
    return true;`;
  return declare(compile(['v'], body, used), () => (min > 0 ? z.array(item.zod()).min(min) : z.array(item.zod())));
}

export function tuple<const D extends readonly Decl<unknown>[]>(items: D): Decl<{ [K in keyof D]: Infer<D[K]> }> {
  const checks = items.map((item) => item.check);
  return declare(
    (v) => Array.isArray(v) && v.length === checks.length && checks.every((check, index) => check(v[index])),
    () => z.tuple(items.map((item) => item.zod()) as unknown as [z.ZodType]),
  );
}

/** A plain object with string keys; every value passes `value` (any value when omitted). */
export function record<T = unknown>(value?: Decl<T>): Decl<Record<string, T>> {
  const check = value?.check;
  return declare(
    check === undefined
      ? isRecord
      : (v) => {
          if (!isRecord(v)) return false;
          for (const key in v) if (Object.hasOwn(v, key) && !check(v[key])) return false;
          return true;
        },
    () => z.record(z.string(), value ? value.zod() : z.unknown()),
  );
}

/** A loose object: the declared keys are checked, unknown keys pass through. */
export function object<const S extends Shape>(shape: S): ObjectDecl<S> {
  const { use, used } = collector();
  const rules = Object.entries(shape).map(([key, decl]) => {
    const rule = decl.inline(property('v', key), use);
    return decl.mayBeUndefined ? `${rule} && ${JSON.stringify(key)} in v` : rule;
  });
  const body = `return typeof v === "object" && v !== null && !Array.isArray(v)${rules.map((rule) => ` && ${rule}`).join('')};`;
  const build = (): z.ZodType =>
    z.looseObject(Object.fromEntries(Object.entries(shape).map(([key, decl]) => [key, decl.zod()])));
  return declare(compile(['v'], body, used), build, { shape }) as ObjectDecl<S>;
}

export function extend<const S extends Shape, const E extends Shape>(
  base: ObjectDecl<S>,
  more: E,
): ObjectDecl<Omit<S, keyof E> & E> {
  return object({ ...base.shape, ...more }) as unknown as ObjectDecl<Omit<S, keyof E> & E>;
}

/** The zod shape of an object declaration (for callers that pick their own strictness). */
export function zodShape<S extends Shape>(decl: ObjectDecl<S>): ZodShapeOf<S> {
  return Object.fromEntries(Object.entries(decl.shape).map(([key, value]) => [key, value.zod()])) as ZodShapeOf<S>;
}
type ZodShapeOf<S extends Shape> = {
  [K in keyof S]: S[K] extends Optional<infer T> ? z.ZodOptional<z.ZodType<T>> : z.ZodType<Infer<S[K]>>;
};

/** Any of the variants, tried in order. */
export function union<const D extends readonly Decl<unknown>[]>(variants: D): Decl<Infer<D[number]>> {
  const checks = variants.map((variant) => variant.check);
  return declare(
    (v) => checks.some((check) => check(v)),
    () => z.union(variants.map((variant) => variant.zod()) as unknown as [z.ZodType, z.ZodType]),
  );
}

type Tagged<K extends string> = ObjectDecl<Shape & { [P in K]: LiteralDecl<string | number | boolean> }>;

/** Variants told apart by the literal value of one key: a switch picks the only check to run. */
export function tagged<const K extends string, const D extends readonly Tagged<K>[]>(
  key: K,
  variants: D,
): Decl<Infer<D[number]>> {
  const { use, used } = collector();
  const cases = variants.map(
    (variant) => `case ${JSON.stringify(variant.shape[key].value)}: return ${use(variant.check)}(v);`,
  );
  const body = `if (typeof v !== "object" || v === null) return false;
    switch (${property('v', key)}) { ${cases.join(' ')} default: return false; }`;
  return declare(compile(['v'], body, used), () =>
    z.discriminatedUnion(key, variants.map((variant) => variant.zod()) as unknown as [z.ZodObject, ...z.ZodObject[]]),
  );
}
