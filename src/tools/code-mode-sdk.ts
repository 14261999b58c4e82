/**
 * Code Mode presentation (SPEC §4 rule 8): the reserved `run_code` schema and the SDK text that
 * declares a scope's visible tools to model-written JavaScript. Everything here is a pure function
 * of its input so the SDK is byte-identical for an unchanged view (prompt caching depends on it).
 */
import type { JsonSchemaObject, ToolSchema } from '../types.js';
import { deepFreeze } from './define-tool.js';

export const RUN_CODE_TOOL_NAME = 'run_code';

export const RUN_CODE_DESCRIPTION = [
  'Run JavaScript: `code` is the body of an async function, executed in a fresh sandbox.',
  'Call tools with `await tools.<name>(args)` (they are declared in the tools SDK); each call resolves to',
  "the tool's result value and throws an Error carrying the tool's message when the tool fails.",
  'Use `console.log(...)` to report what you need: the result is the logged lines joined by newlines,',
  'followed by the return value of the code (if any).',
].join(' ');

const runCodeParameters: JsonSchemaObject = {
  type: 'object',
  properties: {
    description: { type: 'string', description: 'One short line saying what this code does.' },
    code: {
      type: 'string',
      description: 'JavaScript: the body of an async function; `tools` and `console` are in scope.',
    },
  },
  required: ['description', 'code'],
  additionalProperties: false,
};

export const RUN_CODE_SCHEMA: ToolSchema = deepFreeze({
  name: RUN_CODE_TOOL_NAME,
  description: RUN_CODE_DESCRIPTION,
  parameters: runCodeParameters,
});

/** Nested schemas deeper than this are typed `unknown`: the SDK is guidance, not a full compiler. */
const MAX_DEPTH = 8;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Renders `declare const tools: {...}` for schemas already sorted by the resolver. */
export function renderSdk(schemas: readonly ToolSchema[]): string {
  const members = schemas.filter((schema) => schema.name !== RUN_CODE_TOOL_NAME);
  if (members.length === 0) return 'declare const tools: {};\n';
  const lines = ['declare const tools: {'];
  for (const schema of members) {
    lines.push(...docComment(schema.description, '  '));
    const args = schemaToType(schema.parameters, '  ', 0);
    lines.push(`  ${propertyKey(schema.name)}(args: ${args}): Promise<unknown>;`);
  }
  lines.push('};');
  return `${lines.join('\n')}\n`;
}

/** Converts a JSON Schema fragment to a TypeScript type expression; unknown constructs become `unknown`. */
export function schemaToType(schema: unknown, indent: string, depth: number): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return 'unknown';
  const node = schema as JsonSchemaObject;
  if ('const' in node) return literal(node.const);
  if (Array.isArray(node.enum)) return union(node.enum.map(literal));
  const composite = compositeType(node, indent, depth);
  if (composite !== undefined) return composite;
  if (Array.isArray(node.type)) {
    return union(node.type.map((type) => typeFor({ ...node, type }, indent, depth)));
  }
  return typeFor(node, indent, depth);
}

function compositeType(node: JsonSchemaObject, indent: string, depth: number): string | undefined {
  const alternatives = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (alternatives !== undefined) return union(alternatives.map((alt) => schemaToType(alt, indent, depth + 1)));
  if (Array.isArray(node.allOf)) {
    const parts = node.allOf.map((part) => schemaToType(part, indent, depth + 1));
    return parts.length === 0 ? 'unknown' : parts.map(wrapComposite).join(' & ');
  }
  return undefined;
}

function typeFor(node: JsonSchemaObject, indent: string, depth: number): string {
  switch (node.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return arrayType(node, indent, depth);
    case 'object':
      return objectType(node, indent, depth);
    default:
      // Schemas without `type` but with `properties` are still objects in practice.
      return node.properties !== undefined ? objectType(node, indent, depth) : 'unknown';
  }
}

function arrayType(node: JsonSchemaObject, indent: string, depth: number): string {
  if (Array.isArray(node.prefixItems)) {
    return `[${node.prefixItems.map((item) => schemaToType(item, indent, depth + 1)).join(', ')}]`;
  }
  return `${wrapComposite(schemaToType(node.items, indent, depth + 1))}[]`;
}

function objectType(node: JsonSchemaObject, indent: string, depth: number): string {
  const properties = isRecord(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? node.required.filter((k) => typeof k === 'string') : []);
  const inner = `${indent}  `;
  const lines: string[] = [];
  // Author order is kept (it usually reads best); schemas are frozen, so the output is still stable.
  for (const key of Object.keys(properties)) {
    const prop = properties[key];
    const description = isRecord(prop) && typeof prop.description === 'string' ? prop.description : undefined;
    if (description !== undefined) lines.push(...docComment(description, inner));
    const optional = required.has(key) ? '' : '?';
    lines.push(`${inner}${propertyKey(key)}${optional}: ${schemaToType(prop, inner, depth + 1)};`);
  }
  const extra = node.additionalProperties;
  if (extra !== undefined && extra !== false) {
    lines.push(`${inner}[key: string]: ${extra === true ? 'unknown' : schemaToType(extra, inner, depth + 1)};`);
  }
  if (lines.length === 0) return '{}';
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function docComment(text: string, indent: string): string[] {
  // `*/` would end the comment early and turn the rest of the description into code.
  const safe = text.replace(/\*\//g, '*\\/').trim();
  if (safe === '') return [];
  const rows = safe.split(/\r?\n/);
  if (rows.length === 1) return [`${indent}/** ${rows[0]} */`];
  return [`${indent}/**`, ...rows.map((row) => `${indent} * ${row}`.trimEnd()), `${indent} */`];
}

function literal(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return JSON.stringify(value);
  return 'unknown';
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.length === 0) return 'never';
  if (unique.includes('unknown')) return 'unknown';
  // `a | b & c` already means `a | (b & c)`, so union members never need parentheses.
  return unique.join(' | ');
}

/** Parenthesises unions/intersections so `(a | b)[]` and `(a | b) & c` keep their meaning. */
function wrapComposite(type: string): string {
  return hasTopLevelOperator(type) ? `(${type})` : type;
}

/** True when `|` or `&` occurs outside brackets and string literals (nested ones are already grouped). */
function hasTopLevelOperator(type: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < type.length; i++) {
    const ch = type[i];
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === '{' || ch === '[' || ch === '(') depth++;
    else if (ch === '}' || ch === ']' || ch === ')') depth--;
    else if (depth === 0 && (ch === '|' || ch === '&')) return true;
  }
  return false;
}

function propertyKey(key: string): string {
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

function isRecord(value: unknown): value is JsonSchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
