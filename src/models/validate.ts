/** Shared zod plumbing: every factory reports bad options as INVALID_CONFIG naming the offending key. */
import type { z } from 'zod';
import { BroodError } from '../errors.js';
import { parseUntrusted } from '../util/untrusted.js';

/**
 * Parses `input` with `schema`; on failure throws INVALID_CONFIG whose message names the first bad key
 * (dotted path, e.g. `scripts.0.turns.1`) so a user can find it in a large config.
 */
export function parseOptions<T>(factory: string, schema: z.ZodType<T>, input: unknown): T {
  const result = parseUntrusted(schema, input, 'INVALID_CONFIG', `${factory} options`);
  if (result.success) return result.data;
  const issue = deepest(result.error.issues[0]);
  const path = issue?.path.map(String) ?? [];
  // Unknown keys are reported on the parent object; name the stray key itself.
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
  const key = path.length === 0 ? '(options)' : path.join('.');
  const reason = issue?.message ?? 'invalid value';
  throw new BroodError('INVALID_CONFIG', `${factory}: invalid option '${key}': ${reason}`, {
    details: { key, issues: result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
  });
}

type Issue = z.core.$ZodIssue;

/**
 * A union (e.g. "a model id or a model object") reports only that no branch matched; the branch that
 * got furthest names the real problem (`models.0.seed`, not `models.0`). Paths are made absolute.
 */
export function deepest(issue: Issue | undefined): Issue | undefined {
  if (issue?.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    const candidate = deepest(branch[0]);
    if (candidate !== undefined && (best === undefined || candidate.path.length > best.path.length)) best = candidate;
  }
  return best === undefined || best.path.length === 0 ? issue : { ...best, path: [...issue.path, ...best.path] };
}
