/**
 * zod 3 schemas as tool parameters. Most services still import zod 3, whose schemas zod 4's
 * `toJSONSchema` cannot read. Arguments are validated by the zod 3 schema itself (its own `safeParse`,
 * transforms and refinements included); what the model is shown is the JSON Schema of its input side,
 * converted here from the schema's definition. A type with no JSON form (a date, a map, a function, a
 * lazy or recursive schema) is refused, naming the type and the ways out.
 */
import type { JsonSchemaObject } from '../types.js';

type Json = Record<string, unknown>;

/** What brood reads of a zod 3 schema: its definition and its own validation. */
export interface Zod3Schema {
  readonly _def: Zod3Def;
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { issues: Zod3Issue[] } };
}

interface Zod3Issue {
  path: (string | number)[];
  message: string;
}

interface Zod3Def {
  typeName?: string;
  description?: string;
  [key: string]: unknown;
}

/** A zod 3 schema: `~standard.vendor` 'zod' (3.24+), or a `_def` beside `safeParse` (any zod 3), and no zod 4 `_zod`. */
export function isZod3Schema(value: unknown): value is Zod3Schema {
  if (typeof value !== 'object' || value === null || '_zod' in value) return false;
  const { '~standard': standard, _def, safeParse } = value as Record<string, unknown>;
  const vendor = typeof standard === 'object' && standard !== null ? (standard as Json).vendor : undefined;
  return typeof safeParse === 'function' && typeof _def === 'object' && _def !== null && (vendor ?? 'zod') === 'zod';
}

/** Thrown for a type that has no JSON Schema; defineTool turns it into INVALID_CONFIG. */
export class Zod3Unsupported extends Error {}

export function zod3ToJsonSchema(schema: Zod3Schema): JsonSchemaObject {
  return convert(schema._def, new Set()) as JsonSchemaObject;
}

function convert(def: Zod3Def, seen: Set<Zod3Def>): Json {
  if (seen.has(def)) throw new Zod3Unsupported('a recursive schema');
  seen.add(def);
  try {
    const converted = convertType(def, seen);
    return def.description === undefined ? converted : { ...converted, description: def.description };
  } finally {
    seen.delete(def);
  }
}

const inner = (schema: unknown, seen: Set<Zod3Def>): Json => convert((schema as Zod3Schema)._def, seen);

function convertType(def: Zod3Def, seen: Set<Zod3Def>): Json {
  switch (def.typeName) {
    case 'ZodString':
      return withChecks({ type: 'string' }, def.checks, STRING_CHECKS);
    case 'ZodNumber':
      return withChecks({ type: 'number' }, def.checks, NUMBER_CHECKS);
    case 'ZodBoolean':
      return { type: 'boolean' };
    case 'ZodNull':
      return { type: 'null' };
    case 'ZodAny':
    case 'ZodUnknown':
      return {};
    case 'ZodLiteral':
      return { const: def.value };
    case 'ZodEnum':
      return { type: 'string', enum: [...(def.values as string[])] };
    case 'ZodNativeEnum':
      return nativeEnum(def.values as Json);
    case 'ZodArray':
      return array(def, seen);
    case 'ZodTuple':
      return { type: 'array', prefixItems: (def.items as unknown[]).map((item) => inner(item, seen)) };
    case 'ZodObject':
      return object(def, seen);
    case 'ZodRecord':
      return { type: 'object', additionalProperties: inner(def.valueType, seen) };
    case 'ZodUnion':
    case 'ZodDiscriminatedUnion':
      return { anyOf: (def.options as unknown[]).map((option) => inner(option, seen)) };
    case 'ZodIntersection':
      return { allOf: [inner(def.left, seen), inner(def.right, seen)] };
    case 'ZodNullable':
      return { anyOf: [inner(def.innerType, seen), { type: 'null' }] };
    case 'ZodDefault':
      return { ...inner(def.innerType, seen), default: (def.defaultValue as () => unknown)() };
    case 'ZodOptional':
    case 'ZodCatch':
    case 'ZodReadonly':
      return inner(def.innerType, seen);
    case 'ZodBranded':
      return inner(def.type, seen);
    case 'ZodEffects':
      // A refinement or transform runs in safeParse; the model supplies what goes in.
      return inner(def.schema, seen);
    case 'ZodPipeline':
      return inner(def.in, seen);
    default:
      throw new Zod3Unsupported(def.typeName ?? 'an unknown zod 3 type');
  }
}

/** Whether a property may be left out of the model's input (optional, or filled in by a default). */
function mayOmit(schema: unknown): boolean {
  const def = (schema as Zod3Schema)._def;
  if (def.typeName === 'ZodOptional' || def.typeName === 'ZodDefault' || def.typeName === 'ZodCatch') return true;
  if (def.typeName === 'ZodEffects') return mayOmit(def.schema);
  if (def.typeName === 'ZodBranded' || def.typeName === 'ZodReadonly') return mayOmit(def.type ?? def.innerType);
  return false;
}

function object(def: Zod3Def, seen: Set<Zod3Def>): Json {
  const shape = (def.shape as () => Record<string, unknown>)();
  const properties: Json = {};
  const required: string[] = [];
  for (const [key, value] of Object.entries(shape)) {
    properties[key] = inner(value, seen);
    if (!mayOmit(value)) required.push(key);
  }
  const out: Json = { type: 'object', properties };
  if (required.length > 0) out.required = required;
  const catchall = (def.catchall as Zod3Schema | undefined)?._def;
  if (catchall !== undefined && catchall.typeName !== 'ZodNever') out.additionalProperties = convert(catchall, seen);
  else if (def.unknownKeys === 'strict') out.additionalProperties = false;
  return out;
}

function array(def: Zod3Def, seen: Set<Zod3Def>): Json {
  const out: Json = { type: 'array', items: inner(def.type, seen) };
  const bound = (key: string): number | undefined => (def[key] as { value: number } | null | undefined)?.value;
  const exact = bound('exactLength');
  const min = exact ?? bound('minLength');
  const max = exact ?? bound('maxLength');
  if (min !== undefined) out.minItems = min;
  if (max !== undefined) out.maxItems = max;
  return out;
}

function nativeEnum(values: Json): Json {
  // A numeric TypeScript enum maps each number back to its name: only the values are accepted.
  const accepted = Object.keys(values)
    .filter((key) => typeof values[values[key] as string] !== 'number')
    .map((key) => values[key]);
  return { enum: accepted };
}

type Check = { kind: string; value?: unknown; inclusive?: boolean; regex?: RegExp };
type CheckRule = (check: Check) => Json | undefined;

const STRING_FORMATS: Record<string, string> = { email: 'email', url: 'uri', uuid: 'uuid', datetime: 'date-time' };

const STRING_CHECKS: CheckRule = (check) => {
  if (check.kind === 'min') return { minLength: check.value };
  if (check.kind === 'max') return { maxLength: check.value };
  if (check.kind === 'length') return { minLength: check.value, maxLength: check.value };
  if (check.kind === 'regex' && check.regex instanceof RegExp) return { pattern: check.regex.source };
  const format = STRING_FORMATS[check.kind];
  return format === undefined ? undefined : { format };
};

const NUMBER_CHECKS: CheckRule = (check) => {
  if (check.kind === 'int') return { type: 'integer' };
  if (check.kind === 'multipleOf') return { multipleOf: check.value };
  if (check.kind === 'min') return check.inclusive ? { minimum: check.value } : { exclusiveMinimum: check.value };
  if (check.kind === 'max') return check.inclusive ? { maximum: check.value } : { exclusiveMaximum: check.value };
  return undefined;
};

/** The checks JSON Schema can say; the others (refinements, `startsWith`, …) are still enforced by safeParse. */
function withChecks(base: Json, checks: unknown, rule: CheckRule): Json {
  let out = base;
  for (const check of (checks as Check[] | undefined) ?? []) out = { ...out, ...rule(check) };
  return out;
}
