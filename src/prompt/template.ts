/**
 * Strict `{{name}}` templates (SPEC §5.2).
 *
 * Strictness is the point: a prompt that silently keeps `{{ model }}` or drops an unknown variable is
 * a prompt the host never wrote, so every doubtful reference is a TEMPLATE_ERROR instead.
 */
import { BroodError } from '../errors.js';

const VARIABLE_NAME = /^[a-z][a-z0-9_]*$/;

const OPEN = '{{';
const CLOSE = '}}';

/** Where a template lives, so an error can point the host at the right section and its options. */
export interface TemplateLocation {
  section: string;
  knownVariables: readonly string[];
}

export type VariableLookup = (name: string) => string | undefined;

export function isValidVariableName(name: unknown): name is string {
  return typeof name === 'string' && VARIABLE_NAME.test(name);
}

/**
 * Substitutes every `{{name}}` in `text`.
 *
 * The scan is a single left-to-right pass over the *source* text; substituted values are appended to
 * the output and never looked at again, so a value containing `{{x}}` comes out verbatim.
 */
export function renderTemplate(text: string, lookup: VariableLookup, where: TemplateLocation): string {
  let output = '';
  let cursor = 0;
  while (cursor < text.length) {
    const open = text.indexOf(OPEN, cursor);
    if (open === -1) break;
    const close = text.indexOf(CLOSE, open + OPEN.length);
    // A `{{` with no later `}}` cannot be a reference; the rest of the text is literal.
    if (close === -1) break;
    const inner = text.slice(open + OPEN.length, close);
    if (!isValidVariableName(inner)) throw malformedReference(text.slice(open, close + CLOSE.length), where);
    output += text.slice(cursor, open) + resolveVariable(inner, lookup, where);
    cursor = close + CLOSE.length;
  }
  return output + text.slice(cursor);
}

function resolveVariable(name: string, lookup: VariableLookup, where: TemplateLocation): string {
  // Unknown names are rejected before lookup so a typo never reaches (or runs) a host function.
  if (!where.knownVariables.includes(name)) throw unknownVariable(name, where);
  const value = lookup(name);
  if (value === undefined) throw missingValue(name, where);
  return value;
}

function malformedReference(reference: string, where: TemplateLocation): BroodError {
  return templateError(
    `malformed template reference ${JSON.stringify(reference)} in prompt section "${where.section}": ` +
      `write {{name}} with a name matching ${VARIABLE_NAME.source}`,
    where,
    { reference },
  );
}

function unknownVariable(name: string, where: TemplateLocation): BroodError {
  return templateError(`unknown template variable "${name}" in prompt section "${where.section}"`, where, {
    variable: name,
  });
}

function missingValue(name: string, where: TemplateLocation): BroodError {
  return templateError(
    `template variable "${name}" has no value for this assembly (prompt section "${where.section}")`,
    where,
    { variable: name },
  );
}

/** Every template error lists the known variables: the most useful hint for a misspelt reference. */
export function templateError(
  message: string,
  where: TemplateLocation,
  details: Record<string, unknown> = {},
  cause?: unknown,
): BroodError {
  const known = [...where.knownVariables].sort();
  const hint = known.length === 0 ? 'no variables are known' : `known variables: ${known.join(', ')}`;
  return new BroodError('TEMPLATE_ERROR', `${message} (${hint})`, {
    details: { section: where.section, ...details, knownVariables: known },
    ...(cause === undefined ? {} : { cause }),
  });
}
