/**
 * Building blocks of the tool system: one layer of registered tools and a contained listener set.
 */

import { BroodError } from '../errors.js';
import type { ToolDefinition } from '../types.js';
import { describe } from '../util/describe.js';
import { type Disposer, makeDisposer } from '../util/disposer.js';
import { readUntrusted } from '../util/untrusted.js';
import { RUN_CODE_TOOL_NAME } from './code-mode-sdk.js';
import { TOOL_NAME_PATTERN } from './define-tool.js';

/** The turn tool of `run(text, { outputSchema })` (agents/structured-turn.ts): never a registration. */
export const STRUCTURED_OUTPUT_TOOL = 'structured_output';

/** Names brood presents itself; registering one is RESERVED_TOOL_NAME (a host's tool would be shadowed or shadow it). */
const RESERVED_TOOL_NAMES: ReadonlyMap<string, string> = new Map([
  [RUN_CODE_TOOL_NAME, 'Code Mode'],
  [STRUCTURED_OUTPUT_TOOL, 'structured output (run(text, { outputSchema }))'],
]);

/** The tools registered in one layer (global, or one agent's own tools), keyed by name. */
/** What an unused layer reads as (most agents register no tools of their own): shared, never written. */
const NO_TOOLS: ReadonlyMap<string, ToolDefinition> = new Map();

export class ToolLayer {
  /** Made by the first registration. */
  #tools: Map<string, ToolDefinition> | undefined;

  get tools(): ReadonlyMap<string, ToolDefinition> {
    return this.#tools ?? NO_TOOLS;
  }

  /**
   * Adds a tool; throws synchronously on a reserved or duplicate name. `onRemove` runs only when the
   * returned disposer actually removes this registration (not after clear(), not a second time).
   */
  add(tool: ToolDefinition, layerLabel: string, onRemove: () => void): Disposer {
    const name = readUntrusted('INVALID_CONFIG', 'a tool definition', () => checkDefinition(tool));
    if (this.#tools?.has(name)) {
      throw new BroodError('DUPLICATE_TOOL', `Tool "${name}" is already registered in the ${layerLabel} layer`, {
        details: { tool: name },
      });
    }
    this.#tools ??= new Map();
    const tools = this.#tools;
    tools.set(name, tool);
    return makeDisposer(() => {
      // Identity check: after clear() or a re-registration the name may belong to someone else.
      if (tools.get(name) !== tool) return;
      tools.delete(name);
      onRemove();
    });
  }

  clear(): void {
    this.#tools?.clear();
  }
}

/**
 * register() accepts any ToolDefinition, not only defineTool output, so the essentials are rechecked.
 * Returns the name, read once.
 */
function checkDefinition(tool: ToolDefinition): string {
  if (typeof tool !== 'object' || tool === null) {
    throw new BroodError('INVALID_CONFIG', 'register() expects a tool definition (see defineTool)');
  }
  const name: unknown = tool.name;
  const reservedFor = typeof name === 'string' ? RESERVED_TOOL_NAMES.get(name) : undefined;
  if (reservedFor !== undefined) {
    throw new BroodError('RESERVED_TOOL_NAME', `The tool name "${String(name)}" is reserved for ${reservedFor}`);
  }
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new BroodError('INVALID_CONFIG', `Invalid tool name ${describe(name)}`);
  }
  if (typeof tool.parse !== 'function' || typeof tool.execute !== 'function') {
    throw new BroodError('INVALID_CONFIG', `Tool "${name}" is not a tool definition (see defineTool)`);
  }
  return name;
}

/** Change listeners; one throwing listener must not stop the others or the change that fired them. */
export class Listeners {
  readonly #fns = new Set<() => void>();

  add(fn: () => void): Disposer {
    if (typeof fn !== 'function') throw new BroodError('INVALID_CONFIG', 'A change listener must be a function');
    // Wrapped so registering the same function twice yields two independent subscriptions.
    const entry = () => fn();
    this.#fns.add(entry);
    return makeDisposer(() => this.#fns.delete(entry));
  }

  emit(): void {
    for (const fn of [...this.#fns]) callContained(fn);
  }

  clear(): void {
    this.#fns.clear();
  }
}

export function callContained(fn: (() => void) | undefined): void {
  if (fn === undefined) return;
  try {
    fn();
  } catch {
    // Contained by contract: observers cannot break registration or each other.
  }
}
