/**
 * defineTool (SPEC §4): normalises a tool declaration into a frozen ToolDefinition whose
 * `parameters` is always JSON Schema (what models and the Code Mode SDK see) and whose `parse`
 * validates arguments against that same schema, so presentation and validation never diverge.
 */
import { z } from 'zod';
import { BroodError, errorMessage } from '../errors.js';
import type {
  Agent,
  ApprovalVerdict,
  JsonSchemaObject,
  ToolContext,
  ToolDefinition,
  ToolPresentation,
} from '../types.js';
import { describe } from '../util/describe.js';
import { readUntrusted } from '../util/untrusted.js';
import { isZod3Schema, type Zod3Schema, Zod3Unsupported, zod3ToJsonSchema } from './zod3-schema.js';

/** Tool names are sent to providers as function names; this is the portable common subset. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export interface ToolDeclaration<A> {
  name: string;
  description: string;
  /** zod 4, zod 3 (validated by itself, shown to the model as the JSON Schema of its input) or JSON Schema. */
  parameters: z.ZodType<A> | Zod3Type<A> | JsonSchemaObject;
  execute(args: A, ctx: ToolContext): unknown;
  concurrencySafe?: boolean | ((args: A) => boolean);
  /** Safe to run twice: a call a crash interrupted runs again on resume instead of reporting TOOL_OUTCOME_UNKNOWN. */
  idempotent?: boolean;
  forAgent?(agent: Agent | undefined): ToolPresentation;
  /** 'ask': every call waits for the host; a function decides per call (see docs/approvals.md). */
  approval?: 'ask' | ((args: A, ctx: ToolContext) => ApprovalVerdict | Promise<ApprovalVerdict>);
}

/** A zod 3 schema as TypeScript sees it (what `parse` returns is its output type). */
export interface Zod3Type<A> {
  readonly _output: A;
  readonly _def: object;
  safeParse(data: unknown): unknown;
}

/**
 * Returns the erased `ToolDefinition` (SPEC §4) so any typed tool can be registered: `parse` is the
 * only way arguments reach `execute`, which is what makes the erasure sound.
 */
export function defineTool<A>(def: ToolDeclaration<A>): ToolDefinition {
  // Each field is read once, here: a getter or proxy trap that throws is INVALID_CONFIG.
  const fields = readUntrusted('INVALID_CONFIG', 'defineTool declaration', () => readDeclaration(def));
  const { parameters, validator } = readUntrusted('INVALID_CONFIG', `Tool "${fields.name}": parameters`, () =>
    normaliseParameters(fields.name, fields.parameters),
  );
  const name = fields.name;
  const definition: ToolDefinition<A> = {
    name,
    description: fields.description,
    parameters,
    parse: (args: unknown): A => parseWith(name, validator, args) as A,
    // Bound so the definition does not depend on the caller keeping `def` intact.
    execute: fields.execute.bind(def),
    ...(fields.concurrencySafe === undefined ? {} : { concurrencySafe: bindIfFunction(def, fields.concurrencySafe) }),
    ...(fields.idempotent === undefined ? {} : { idempotent: fields.idempotent }),
    ...(fields.forAgent === undefined ? {} : { forAgent: fields.forAgent.bind(def) }),
    ...(fields.approval === undefined ? {} : { approval: bindIfFunction(def, fields.approval) }),
  };
  return Object.freeze(definition) as unknown as ToolDefinition;
}

/** True for anything zod 4 can convert (classic and mini schemas both carry `_zod`). */
export function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/** Recursively freezes a JSON value so a shared schema cannot be mutated by one consumer for all. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The declaration's fields, each read once and checked. */
function readDeclaration<A>(declaration: ToolDeclaration<A>): ToolDeclaration<A> {
  if (typeof declaration !== 'object' || declaration === null)
    throw invalidConfig('defineTool expects a tool declaration object');
  const { name, description, parameters, execute, concurrencySafe, idempotent, forAgent, approval } = declaration;
  const def: ToolDeclaration<A> = { name, description, parameters, execute };
  if (idempotent !== undefined) def.idempotent = idempotent;
  if (approval !== undefined) def.approval = approval;
  if (concurrencySafe !== undefined) def.concurrencySafe = concurrencySafe;
  if (forAgent !== undefined) def.forAgent = forAgent;
  validateDeclaration(def);
  return def;
}

function validateDeclaration<A>(def: ToolDeclaration<A>): void {
  if (typeof def.name !== 'string' || !TOOL_NAME_PATTERN.test(def.name)) {
    throw invalidConfig(`Invalid tool name ${describe(def.name)}: must match ${TOOL_NAME_PATTERN.source}`);
  }
  if (typeof def.description !== 'string' || def.description.trim() === '') {
    throw invalidConfig(`Tool "${def.name}" needs a non-empty description`);
  }
  if (typeof def.execute !== 'function') throw invalidConfig(`Tool "${def.name}" needs an execute function`);
  const safe = def.concurrencySafe;
  if (safe !== undefined && typeof safe !== 'boolean' && typeof safe !== 'function') {
    throw invalidConfig(`Tool "${def.name}": concurrencySafe must be a boolean or a function`);
  }
  if (def.idempotent !== undefined && typeof def.idempotent !== 'boolean') {
    throw invalidConfig(`Tool "${def.name}": idempotent must be a boolean`);
  }
  if (def.forAgent !== undefined && typeof def.forAgent !== 'function') {
    throw invalidConfig(`Tool "${def.name}": forAgent must be a function`);
  }
  if (def.approval !== undefined && def.approval !== 'ask' && typeof def.approval !== 'function') {
    throw invalidConfig(`Tool "${def.name}": approval must be 'ask' or a function`);
  }
  const params: unknown = def.parameters;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw invalidConfig(`Tool "${def.name}": parameters must be a zod schema or a JSON Schema object`);
  }
}

type Validator = {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: z.ZodError };
};

function normaliseParameters(
  name: string,
  parameters: z.ZodType | Zod3Type<unknown> | JsonSchemaObject,
): { parameters: JsonSchemaObject; validator: Validator } {
  if (isZodSchema(parameters)) {
    return { parameters: deepFreeze(zodToJsonSchema(name, parameters)), validator: parameters };
  }
  if (isZod3Schema(parameters))
    return { parameters: deepFreeze(zod3ParametersSchema(name, parameters)), validator: parameters as Validator };
  refuseForeignSchema(name, parameters);
  // Copy first: the caller may keep mutating its object, and our view of the schema must not move.
  const json = stripSchemaKey(cloneJson(name, parameters as JsonSchemaObject));
  let validator: Validator;
  try {
    validator = z.fromJSONSchema(json);
  } catch (error) {
    throw invalidConfig(`Tool "${name}": unsupported JSON Schema: ${errorMessage(error)}`, error);
  }
  return { parameters: deepFreeze(json), validator };
}

/**
 * A schema object of another library is not JSON data, and the generic refusal would not say why: a
 * Standard Schema that is neither zod 4 nor zod 3 is named, with the fix.
 */
function refuseForeignSchema(name: string, parameters: object): void {
  const standard: unknown = (parameters as { '~standard'?: unknown })['~standard'];
  if (typeof standard !== 'object' || standard === null) return;
  const vendor: unknown = (standard as { vendor?: unknown }).vendor;
  throw invalidConfig(
    `Tool "${name}": parameters is a ${typeof vendor === 'string' ? `${vendor} ` : ''}Standard Schema, ` +
      'which brood cannot express as JSON Schema; pass a zod schema or a JSON Schema object',
  );
}

function zod3ParametersSchema(name: string, schema: Zod3Schema): JsonSchemaObject {
  try {
    return zod3ToJsonSchema(schema);
  } catch (error) {
    if (!(error instanceof Zod3Unsupported)) throw error;
    throw invalidConfig(
      `Tool "${name}": parameters (a zod 3 schema) uses ${error.message}, which has no JSON Schema; ` +
        'use JSON types there, or pass a JSON Schema object',
    );
  }
}

function zodToJsonSchema(name: string, schema: z.ZodType): JsonSchemaObject {
  try {
    // io:'input' because the model supplies the input side (defaults optional, transforms allowed).
    return stripSchemaKey(z.toJSONSchema(schema, { io: 'input' }) as JsonSchemaObject);
  } catch (error) {
    throw invalidConfig(`Tool "${name}": parameters cannot be expressed as JSON Schema: ${errorMessage(error)}`, error);
  }
}

/** `$schema` is noise for providers (some reject it), so it never leaves defineTool. */
function stripSchemaKey(schema: JsonSchemaObject): JsonSchemaObject {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

function cloneJson(name: string, value: JsonSchemaObject): JsonSchemaObject {
  try {
    return structuredClone(value);
  } catch (error) {
    throw invalidConfig(`Tool "${name}": parameters must be plain JSON data`, error);
  }
}

function parseWith(name: string, validator: Validator, args: unknown): unknown {
  const result = validator.safeParse(args);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue === undefined ? '(root)' : formatPath(issue.path);
  const message = issue?.message ?? 'invalid arguments';
  throw new BroodError('INVALID_ARGS', `Invalid arguments for tool "${name}" at ${path}: ${message}`, {
    details: { tool: name, path },
  });
}

/** Renders a zod issue path like `items[2].name`; the root is spelled out so the message is never blank. */
export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** A function field bound to its declaration (so it may use `this`); a constant as it is. */
function bindIfFunction<A, T>(def: ToolDeclaration<A>, value: T): T {
  return typeof value === 'function' ? (value.bind(def) as T) : value;
}

function invalidConfig(message: string, cause?: unknown): BroodError {
  return new BroodError('INVALID_CONFIG', message, cause === undefined ? undefined : { cause });
}
