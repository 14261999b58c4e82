/**
 * A JSON Schema from an untrusted party (an MCP client's `output_schema`) is turned into a validator
 * that runs on the host's main thread. A regular expression in it runs on JavaScript's backtracking
 * engine, where a pattern like `^(a+)+$` against a 30-character answer blocks the whole process for
 * many seconds. So such a schema may carry no regular expression at all: `pattern`, `patternProperties`
 * and `format` (each format is a built-in regular expression) are refused with INVALID_ARGS naming the
 * keyword and where it sits. A host's own schemas (code, a `brood run` config) are trusted and unchecked.
 */
import { BroodError } from '../errors.js';

/** Keywords that make the validator run a regular expression. */
const REGEX_KEYWORDS = ['pattern', 'patternProperties', 'format'] as const;

/** Keywords whose value maps names to subschemas: the names are data, the values schemas. */
const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);

/** Keywords whose value is instance data, never a schema: a key named `pattern` in there is not one. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/**
 * Throws INVALID_ARGS when `schema` (the value of argument `what`) holds a regular-expression keyword at
 * any schema position. Any other object- or array-valued keyword is walked as schemas (so an unknown
 * keyword cannot hide one). Iterative: a deeply nested schema cannot overflow the stack here.
 */
export function refuseSchemaRegexes(schema: unknown, what: string): void {
  const pending: { node: unknown; path: string }[] = [{ node: schema, path: what }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, path } = next;
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) pending.push({ node: item, path: `${path}[${index}]` });
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    const keyword = REGEX_KEYWORDS.find((name) => Object.hasOwn(node, name));
    if (keyword !== undefined) throw refusal(keyword, path);
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const [name, sub] of Object.entries(value)) pending.push({ node: sub, path: `${path}.${key}.${name}` });
      } else {
        pending.push({ node: value, path: `${path}.${key}` });
      }
    }
  }
}

function refusal(keyword: string, path: string): BroodError {
  return new BroodError(
    'INVALID_ARGS',
    `${path}: '${keyword}' is not accepted here: a client's schema may not contain regular expressions ` +
      '(pattern, patternProperties, format), which would run on the server',
    { details: { keyword, path } },
  );
}
