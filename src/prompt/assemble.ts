/**
 * Turns a stack of layers (global first, most specific last) into the system prompt one scope sees.
 */

import { DEFAULTS } from '../defaults.js';
import type { AssembledPrompt, PromptContext } from '../types.js';
import { BUILTIN_VARIABLES, type PromptLayer, type SectionEntry } from './registry.js';
import { renderTemplate, type TemplateLocation, templateError } from './template.js';

export interface AssemblyInput {
  /** General to specific: a later layer shadows same-name sections and variables of earlier ones. */
  layers: readonly PromptLayer[];
  ctx: PromptContext;
  /** Values of the built-in variables for this scope; absent/undefined means "no value here". */
  builtins: Readonly<Record<string, string | undefined>>;
}

/** A section as it takes part in this assembly: its effective slot plus the provider that won. */
interface Slot {
  entry: SectionEntry;
  order: number;
  seq: number;
}

export function assemblePrompt(input: AssemblyInput): AssembledPrompt {
  // Listed only when a section names a variable (or an error lists them): a fan-out assembles a prompt
  // per child, and most prompts name none.
  let known: readonly string[] | undefined;
  const knownVariables = (): readonly string[] => {
    known ??= collectVariableNames(input.layers);
    return known;
  };
  const sections: AssembledPrompt['sections'] = [];
  for (const slot of resolveSlots(input.layers)) {
    const text = renderSection(slot.entry, input, knownVariables);
    // Whitespace-only output counts as "no section" so an empty persona shadow leaves no gap.
    if (text.trim().length > 0) sections.push({ name: slot.entry.name, text });
  }
  return { system: sections.map((section) => section.text).join('\n\n'), sections };
}

/**
 * Most specific wins per name. A shadow always takes the shadowed section's tie position (SPEC §5.1:
 * "ties by one runtime-wide registration counter, a shadow taking the slot of the section it
 * shadows"), and its order too unless it gives its own. So overriding a section's text never moves
 * it, and an agent persona registered late still precedes other order-0 sections as the global one did.
 */
function resolveSlots(layers: readonly PromptLayer[]): Slot[] {
  const slots = new Map<string, Slot>();
  for (const layer of layers) {
    for (const entry of layer.sections.values()) {
      const shadowed = slots.get(entry.name);
      const order = entry.order ?? shadowed?.order ?? DEFAULTS.sectionOrder;
      slots.set(entry.name, { entry, order, seq: shadowed?.seq ?? entry.seq });
    }
  }
  return [...slots.values()].sort((a, b) => a.order - b.order || a.seq - b.seq);
}

function renderSection(entry: SectionEntry, input: AssemblyInput, knownVariables: () => readonly string[]): string {
  // Tool guidance disappears with the tool; the provider is not even evaluated.
  if (entry.tool !== undefined && !input.ctx.tools.has(entry.tool)) return '';
  const where: TemplateLocation = {
    section: entry.name,
    get knownVariables() {
      return knownVariables();
    },
  };
  const source = evaluateText(entry, input.ctx, where);
  return renderTemplate(source, (name) => lookupVariable(name, input, where), where);
}

function evaluateText(entry: SectionEntry, ctx: PromptContext, where: TemplateLocation): string {
  if (typeof entry.text === 'string') return entry.text;
  let value: unknown;
  try {
    value = entry.text(ctx);
  } catch (error) {
    throw templateError(`prompt section "${entry.name}" text function threw`, where, {}, error);
  }
  if (typeof value !== 'string') {
    throw templateError(`prompt section "${entry.name}" text function returned ${typeof value}, not a string`, where);
  }
  return value;
}

function lookupVariable(name: string, input: AssemblyInput, where: TemplateLocation): string | undefined {
  if (isBuiltin(name)) return coerceValue(input.builtins[name], name, where);
  const provider = findVariable(input.layers, name);
  if (provider === undefined) return undefined;
  let value: unknown;
  try {
    value = provider(input.ctx);
  } catch (error) {
    throw templateError(
      `template variable "${name}" threw in prompt section "${where.section}"`,
      where,
      { variable: name },
      error,
    );
  }
  return coerceValue(value, name, where);
}

/** Hosts in plain JS may return numbers or null; accept the obvious cases rather than print "[object Object]". */
function coerceValue(value: unknown, name: string, where: TemplateLocation): string | undefined {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  throw templateError(`template variable "${name}" returned ${typeof value}, not a string`, where, { variable: name });
}

function findVariable(layers: readonly PromptLayer[], name: string) {
  for (let i = layers.length - 1; i >= 0; i--) {
    const provider = layers[i]?.variables.get(name);
    if (provider !== undefined) return provider;
  }
  return undefined;
}

function isBuiltin(name: string): boolean {
  return (BUILTIN_VARIABLES as readonly string[]).includes(name);
}

/** Built-ins are always "known" (a global assembly just has no value for them), plus every registered name. */
function collectVariableNames(layers: readonly PromptLayer[]): string[] {
  const names = new Set<string>(BUILTIN_VARIABLES);
  for (const layer of layers) for (const name of layer.variables.keys()) names.add(name);
  return [...names].sort();
}
