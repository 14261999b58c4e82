/**
 * Tool filters (SPEC §4 rules 3–5): validation at restrict() time and the admit test the resolver
 * applies to the *live* global registry on every resolution.
 */
import { BroodError } from '../errors.js';
import type { ToolFilter } from '../types.js';
import { readUntrusted } from '../util/untrusted.js';
import { RUN_CODE_TOOL_NAME } from './code-mode-sdk.js';

/** An installed filter. Arrays are copied into sets so later caller mutation has no effect. */
export interface Restriction {
  readonly allow: ReadonlySet<string> | undefined;
  readonly deny: ReadonlySet<string> | undefined;
  /** The copied filter, kept so sessions can record and later reinstall exactly what was asked. */
  readonly filter: ToolFilter;
}

/**
 * Turns a caller's filter into a Restriction. With `validateNames`, every named entry must be a
 * currently registered global tool; without it (a filter restored from a session) names are
 * trusted, because tools may legitimately register after the agent is resumed.
 */
export function createRestriction(
  filter: ToolFilter,
  knownGlobals: readonly string[],
  validateNames: boolean,
): Restriction {
  return readUntrusted('INVALID_CONFIG', 'a tool filter', () => restrictionOf(filter, knownGlobals, validateNames));
}

function restrictionOf(filter: ToolFilter, knownGlobals: readonly string[], validateNames: boolean): Restriction {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    throw invalidFilter('A tool filter must be an object with allow and/or deny', knownGlobals);
  }
  const allow = copyList(filter.allow, 'allow', knownGlobals);
  const deny = copyList(filter.deny, 'deny', knownGlobals);
  if (allow === undefined && deny === undefined) {
    throw invalidFilter('A tool filter must give allow or deny (got neither)', knownGlobals);
  }
  if (validateNames) {
    checkNames(allow, 'allow', knownGlobals);
    checkNames(deny, 'deny', knownGlobals);
  }
  const copy: ToolFilter = {};
  if (allow !== undefined) copy.allow = [...allow];
  if (deny !== undefined) copy.deny = [...deny];
  return Object.freeze({
    allow: allow === undefined ? undefined : new Set(allow),
    deny: deny === undefined ? undefined : new Set(deny),
    filter: copy,
  });
}

/** Allow first, then deny (SPEC §4 rule 3.1). An absent allow admits everything. */
export function admits(restriction: Restriction, name: string): boolean {
  if (restriction.allow !== undefined && !restriction.allow.has(name)) return false;
  return restriction.deny === undefined || !restriction.deny.has(name);
}

/** Several restrictions intersect: a global tool must be admitted by every one (rule 3.2). */
export function admittedByAll(restrictions: Iterable<Restriction>, name: string): boolean {
  for (const restriction of restrictions) {
    if (!admits(restriction, name)) return false;
  }
  return true;
}

function copyList(value: unknown, key: 'allow' | 'deny', knownGlobals: readonly string[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw invalidFilter(`Tool filter ${key} must be an array of tool names`, knownGlobals);
  for (const entry of value) {
    if (typeof entry !== 'string') {
      throw invalidFilter(`Tool filter ${key} entry ${String(entry)} is not a tool name`, knownGlobals);
    }
  }
  return [...(value as string[])];
}

function checkNames(names: string[] | undefined, key: 'allow' | 'deny', knownGlobals: readonly string[]): void {
  if (names === undefined) return;
  const known = new Set(knownGlobals);
  for (const name of names) {
    if (known.has(name)) continue;
    const why = name === RUN_CODE_TOOL_NAME ? ' (run_code is outside tool filters)' : '';
    throw invalidFilter(`Tool filter ${key} entry "${name}" is not a registered global tool${why}`, knownGlobals, {
      entry: name,
      list: key,
    });
  }
}

function invalidFilter(
  message: string,
  knownGlobals: readonly string[],
  extra: Record<string, unknown> = {},
): BroodError {
  const known = knownGlobals.length === 0 ? '(none)' : knownGlobals.join(', ');
  return new BroodError('INVALID_TOOL_FILTER', `${message}. Known global tools: ${known}`, {
    details: { ...extra, knownGlobalTools: [...knownGlobals] },
  });
}
