/**
 * One layer of prompt sections and variables (the global layer, or one agent's layer).
 *
 * A layer only stores and validates; precedence between layers and rendering live in assemble.ts, so
 * the same layer type serves `brood.prompt` and every `agent.prompt`.
 */

import { BroodError } from '../errors.js';
import type { PromptContext, PromptSection } from '../types.js';
import { type Disposer, makeDisposer } from '../util/disposer.js';
import { readUntrusted } from '../util/untrusted.js';
import { isValidVariableName } from './template.js';

export const BUILTIN_VARIABLES = ['agent_id', 'depth', 'provider', 'model'] as const;
export type BuiltinVariable = (typeof BUILTIN_VARIABLES)[number];

const BUILTIN_NAMES: ReadonlySet<string> = new Set(BUILTIN_VARIABLES);

export type SectionText = PromptSection['text'];
export type VariableProvider = (ctx: PromptContext) => string | undefined;

/** A registered section, copied from the caller's object so later mutation cannot change the prompt. */
export interface SectionEntry {
  readonly name: string;
  /** `undefined` (not 100) so a shadow can tell "no order given" and inherit the shadowed slot. */
  readonly order: number | undefined;
  readonly tool: string | undefined;
  readonly text: SectionText;
  /** Runtime-wide registration counter: the tie-breaker between equal orders. */
  readonly seq: number;
}

export interface LayerHooks {
  nextSeq(): number;
  changed(): void;
}

/** What an unused layer reads as (most agents' own layers stay empty): shared, never written. */
const NO_SECTIONS: ReadonlyMap<string, SectionEntry> = new Map();
const NO_VARIABLES: ReadonlyMap<string, VariableProvider> = new Map();

export class PromptLayer {
  /** Made by the first registration. */
  private ownSections: Map<string, SectionEntry> | undefined;
  private ownVariables: Map<string, VariableProvider> | undefined;
  private closed = false;

  constructor(
    readonly label: string,
    private readonly hooks: LayerHooks,
  ) {}

  get sections(): ReadonlyMap<string, SectionEntry> {
    return this.ownSections ?? NO_SECTIONS;
  }

  get variables(): ReadonlyMap<string, VariableProvider> {
    return this.ownVariables ?? NO_VARIABLES;
  }

  registerSection(input: PromptSection): Disposer {
    this.assertOpen();
    const fields = readUntrusted('INVALID_CONFIG', 'a prompt section', () => validateSection(input));
    if (this.sections.has(fields.name)) {
      throw new BroodError(
        'DUPLICATE_SECTION',
        `prompt section "${fields.name}" is already registered in ${this.label}`,
        {
          details: { section: fields.name },
        },
      );
    }
    const entry: SectionEntry = { ...fields, seq: this.hooks.nextSeq() };
    this.ownSections ??= new Map();
    const sections = this.ownSections;
    sections.set(entry.name, entry);
    this.hooks.changed();
    return makeDisposer(() => this.remove(sections, entry.name, entry));
  }

  registerVariable(name: string, value: VariableProvider): Disposer {
    this.assertOpen();
    validateVariable(name, value, this.variables, this.label);
    this.ownVariables ??= new Map();
    const variables = this.ownVariables;
    variables.set(name, value);
    this.hooks.changed();
    return makeDisposer(() => this.remove(variables, name, value));
  }

  /** Drops everything (agent disposal); later registrations fail with DISPOSED. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const hadContent = this.sections.size > 0 || this.variables.size > 0;
    this.ownSections?.clear();
    this.ownVariables?.clear();
    if (hadContent) this.hooks.changed();
  }

  assertOpen(): void {
    if (this.closed) throw new BroodError('DISPOSED', `${this.label} prompt registry is disposed`);
  }

  /** Removes only the exact item this disposer registered: a later same-name item must survive. */
  private remove<T>(map: Map<string, T>, key: string, item: T): void {
    if (map.get(key) !== item) return;
    map.delete(key);
    this.hooks.changed();
  }
}

function validateSection(input: PromptSection): Omit<SectionEntry, 'seq'> {
  if (typeof input !== 'object' || input === null) throw invalidSection('a section must be an object');
  const { name, order, tool, text } = input;
  if (typeof name !== 'string' || name.length === 0) throw invalidSection('section name must be a non-empty string');
  if (typeof text !== 'string' && typeof text !== 'function') {
    throw invalidSection(`section "${name}": text must be a string or a function`, name);
  }
  if (order !== undefined && (typeof order !== 'number' || !Number.isFinite(order))) {
    throw invalidSection(`section "${name}": order must be a finite number`, name);
  }
  if (tool !== undefined && (typeof tool !== 'string' || tool.length === 0)) {
    throw invalidSection(`section "${name}": tool must be a non-empty string`, name);
  }
  return { name, order, tool, text };
}

function invalidSection(message: string, section?: string): BroodError {
  return new BroodError('INVALID_CONFIG', `invalid prompt section: ${message}`, {
    ...(section === undefined ? {} : { details: { section } }),
  });
}

function validateVariable(name: string, value: unknown, existing: ReadonlyMap<string, unknown>, label: string): void {
  if (!isValidVariableName(name)) {
    throw new BroodError(
      'TEMPLATE_ERROR',
      `invalid template variable name ${JSON.stringify(name)}: must match ^[a-z][a-z0-9_]*$`,
      {
        details: { variable: name },
      },
    );
  }
  if (BUILTIN_NAMES.has(name)) {
    throw new BroodError('DUPLICATE_VARIABLE', `template variable "${name}" is built in and cannot be registered`, {
      details: { variable: name },
    });
  }
  if (existing.has(name)) {
    throw new BroodError('DUPLICATE_VARIABLE', `template variable "${name}" is already registered in ${label}`, {
      details: { variable: name },
    });
  }
  if (typeof value !== 'function') {
    throw new BroodError('INVALID_CONFIG', `template variable "${name}": value must be a function`, {
      details: { variable: name },
    });
  }
}
