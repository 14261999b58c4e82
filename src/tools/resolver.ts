/**
 * The single resolver (SPEC §4 rule 1). Every consumer — view(), presented schemas, lookup,
 * execution, concurrency classification and the SDK — goes through `resolveAll` / `resolveOne`,
 * which share `candidate` + `present`, so a tool can never be visible without being executable
 * (or the reverse). Nothing is cached: each call reads the live layers (what is kept per definition,
 * its plain schema and entry, derives from the definition alone).
 */
import type { Agent, ToolDefinition, ToolSchema, ToolView } from '../types.js';
import { compareCodeUnits } from './code-mode-sdk.js';
import { admittedByAll, type Restriction } from './restriction.js';

export type ToolLayerName = 'global' | 'agent';

export interface ResolvedTool {
  readonly name: string;
  /** The schema as this scope presents it (after forAgent). */
  readonly schema: ToolSchema;
  readonly definition: ToolDefinition;
  readonly layer: ToolLayerName;
}

/** The live inputs of one scope's resolution. The global scope has no restrictions and no local layer. */
export interface ScopeInputs {
  readonly globals: ReadonlyMap<string, ToolDefinition>;
  readonly locals: ReadonlyMap<string, ToolDefinition> | undefined;
  readonly restrictions: Iterable<Restriction>;
  readonly agent: Agent | undefined;
}

/**
 * Every tool visible to the scope, sorted by name in code unit order. Each agent's setup and each of
 * its plans resolve the whole scope, so this makes no set of names and no sort buffer: globals a local
 * shadows are skipped, then the locals follow.
 */
export function resolveAll(inputs: ScopeInputs): ResolvedTool[] {
  const { globals, locals } = inputs;
  const resolved: ResolvedTool[] = [];
  for (const name of globals.keys()) {
    if (locals?.has(name)) continue;
    const tool = resolveOne(inputs, name);
    if (tool !== undefined) resolved.push(tool);
  }
  if (locals !== undefined) {
    for (const name of locals.keys()) {
      const tool = resolveOne(inputs, name);
      if (tool !== undefined) resolved.push(tool);
    }
  }
  return sortByName(resolved);
}

/** A scope holds a handful of tools: an insertion sort in place, where Array#sort allocates its buffers. */
const SORTED_IN_PLACE = 32;
function sortByName(tools: ResolvedTool[]): ResolvedTool[] {
  if (tools.length > SORTED_IN_PLACE) return tools.sort((a, b) => compareCodeUnits(a.name, b.name));
  for (let i = 1; i < tools.length; i++) {
    const tool = tools[i] as ResolvedTool;
    let j = i - 1;
    for (; j >= 0 && compareCodeUnits((tools[j] as ResolvedTool).name, tool.name) > 0; j--)
      tools[j + 1] = tools[j] as ResolvedTool;
    tools[j + 1] = tool;
  }
  return tools;
}

/** The one tool `name` resolves to in this scope, or undefined when it is not visible. */
export function resolveOne(inputs: ScopeInputs, name: string): ResolvedTool | undefined {
  const found = candidate(inputs, name);
  return found === undefined ? undefined : present(found.definition, found.layer, inputs.agent);
}

/** Own tools first (they shadow and are never filtered), then admitted globals (rule 3). */
function candidate(
  inputs: ScopeInputs,
  name: string,
): { definition: ToolDefinition; layer: ToolLayerName } | undefined {
  const local = inputs.locals?.get(name);
  if (local !== undefined) return { definition: local, layer: 'agent' };
  const global = inputs.globals.get(name);
  if (global === undefined || !admittedByAll(inputs.restrictions, name)) return undefined;
  return { definition: global, layer: 'global' };
}

/** Applies forAgent after filtering: `false` hides the tool as if it were filtered. */
function present(definition: ToolDefinition, layer: ToolLayerName, agent: Agent | undefined): ResolvedTool | undefined {
  const presentation = presentationFor(definition, agent);
  if (presentation === false) return undefined;
  if (presentation === undefined) return plainResolved(definition, layer);
  const schema: ToolSchema = {
    name: definition.name,
    description: presentation.description ?? definition.description,
    parameters: presentation.parameters ?? definition.parameters,
  };
  return { name: definition.name, schema, definition, layer };
}

/** Like its plain schema, a tool presented alike to every agent resolves to one frozen entry per layer. */
const plainEntries: Record<ToolLayerName, WeakMap<ToolDefinition, ResolvedTool>> = {
  global: new WeakMap(),
  agent: new WeakMap(),
};
function plainResolved(definition: ToolDefinition, layer: ToolLayerName): ResolvedTool {
  const entries = plainEntries[layer];
  let entry = entries.get(definition);
  if (entry === undefined) {
    entry = Object.freeze({ name: definition.name, schema: plainSchema(definition), definition, layer });
    entries.set(definition, entry);
  }
  return entry;
}

/**
 * A tool without a per-agent presentation is presented the same to every agent: one frozen schema per
 * definition, so a wide fan-out's children share it (and a link keys their views by it, view-numbers.ts).
 */
const plainSchemas = new WeakMap<ToolDefinition, ToolSchema>();
function plainSchema(definition: ToolDefinition): ToolSchema {
  let schema = plainSchemas.get(definition);
  if (schema === undefined) {
    schema = Object.freeze({
      name: definition.name,
      description: definition.description,
      parameters: definition.parameters,
    });
    plainSchemas.set(definition, schema);
  }
  return schema;
}

function presentationFor(definition: ToolDefinition, agent: Agent | undefined) {
  if (definition.forAgent === undefined) return undefined;
  try {
    return definition.forAgent(agent);
  } catch {
    // A presentation hook that throws cannot say how to show the tool; hiding it fails closed and
    // keeps view and execution consistent (both see the same hidden tool).
    return false as const;
  }
}

/** A snapshot view; callers ask again after a change rather than holding on to it. */
export function toView(resolved: readonly ResolvedTool[]): ToolView {
  const names = resolved.map((tool) => tool.name);
  const schemas = resolved.map((tool) => tool.schema);
  // Built on the first lookup: most views are read for their names and schemas only.
  let index: Set<string> | undefined;
  const has = (name: string) => {
    index ??= new Set(names);
    return index.has(name);
  };
  return { names, schemas, has };
}
