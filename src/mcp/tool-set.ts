/**
 * Keeps one registry layer (global, or one agent's) in step with a server's tool list. Tools enter
 * through the ordinary `register()`, so the one resolver, filters, forged-call refusal, Code Mode and
 * sessions treat them like any other tool; a list_changed removes, adds and re-registers (changed
 * description or schema) exactly the tools that differ, each step a normal live-registry change.
 */

import { BroodError } from '../errors.js';
import { defineTool } from '../tools/define-tool.js';
import type { ToolContext, ToolDefinition, ToolRegistry } from '../types.js';
import type { Disposer } from '../util/disposer.js';
import { refuseSchemaRegexes } from '../util/untrusted-schema.js';
import type { ParsedMcpConfig } from './config.js';
import type { McpToolInfo } from './connection.js';
import { mcpToolName } from './names.js';
import { type McpCallResult, renderResult } from './render.js';

export type CallMcpTool = (name: string, args: unknown, signal: AbortSignal) => Promise<McpCallResult>;

interface Wanted {
  tool: McpToolInfo;
  fingerprint: string;
}

export class McpToolSet {
  readonly #registry: ToolRegistry;
  readonly #config: ParsedMcpConfig;
  readonly #call: CallMcpTool;
  readonly #entries = new Map<string, { fingerprint: string; dispose: Disposer }>();
  #disposed = false;

  constructor(registry: ToolRegistry, config: ParsedMcpConfig, call: CallMcpTool) {
    this.#registry = registry;
    this.#config = config;
    this.#call = call;
  }

  get names(): string[] {
    return [...this.#entries.keys()];
  }

  /**
   * `strict` (the first list, inside use()): a clash fails DUPLICATE_TOOL and removes everything this
   * set registered. Later lists cannot fail anyone, so a clashing tool is left out and the rest apply.
   */
  sync(tools: readonly McpToolInfo[], strict = false): void {
    if (this.#disposed) return;
    const wanted = this.#plan(tools, strict);
    for (const [name, entry] of [...this.#entries]) {
      if (wanted.get(name)?.fingerprint === entry.fingerprint) continue;
      this.#entries.delete(name);
      entry.dispose();
    }
    for (const [name, { tool, fingerprint }] of wanted) {
      if (this.#entries.has(name)) continue;
      try {
        this.#entries.set(name, { fingerprint, dispose: this.#registry.register(this.#definition(name, tool)) });
      } catch (error) {
        if (!strict) continue;
        this.dispose();
        throw error;
      }
    }
  }

  dispose(): void {
    this.#disposed = true;
    for (const entry of this.#entries.values()) entry.dispose();
    this.#entries.clear();
  }

  #plan(tools: readonly McpToolInfo[], strict: boolean): Map<string, Wanted> {
    const wanted = new Map<string, Wanted>();
    const origin = new Map<string, string>();
    for (const tool of tools) {
      const name = mcpToolName(this.#config.server.name, tool.name);
      if (!this.#selected(tool.name, name)) continue;
      const first = origin.get(name);
      if (first !== undefined) {
        if (strict) {
          throw new BroodError(
            'DUPLICATE_TOOL',
            `MCP server "${this.#config.server.name}": tools "${first}" and "${tool.name}" both become "${name}"`,
            {
              details: { tool: name },
            },
          );
        }
        continue;
      }
      origin.set(name, tool.name);
      wanted.set(name, {
        tool,
        fingerprint: JSON.stringify([describe(tool), tool.inputSchema, this.#concurrencySafe(tool, name)]),
      });
    }
    return wanted;
  }

  #selected(original: string, name: string): boolean {
    const { include, exclude } = this.#config;
    if (exclude.has(original) || exclude.has(name)) return false;
    return include === undefined || include.has(original) || include.has(name);
  }

  #concurrencySafe(tool: McpToolInfo, name: string): boolean {
    const safe = this.#config.concurrencySafe;
    if (typeof safe === 'boolean') return safe && tool.annotations?.readOnlyHint === true;
    return safe.has(tool.name) || safe.has(name);
  }

  #definition(name: string, tool: McpToolInfo): ToolDefinition {
    const original = tool.name;
    const call = this.#call;
    const declaration = {
      name,
      description: describe(tool),
      concurrencySafe: this.#concurrencySafe(tool, name),
      execute: async (args: unknown, ctx: ToolContext) =>
        renderResult(original, await call(original, args, ctx.signal)),
    };
    let validating: ToolDefinition;
    let presented: Record<string, unknown> | undefined;
    try {
      // A regular expression from a server the host did not name would run here, on the main thread.
      if (this.#config.untrustedSchemas) refuseSchemaRegexes(tool.inputSchema, 'inputSchema');
      validating = defineTool({ ...declaration, parameters: tool.inputSchema });
    } catch {
      // A schema zod cannot turn into a validator is still the server's schema: the model sees it
      // as it is and the server validates the call.
      validating = defineTool({ ...declaration, parameters: { type: 'object' } });
      presented = withoutSchemaKey(tool.inputSchema);
    }
    return Object.freeze({
      ...validating,
      ...(presented === undefined ? {} : { parameters: presented }),
      // Validate, but send the server the arguments as the model wrote them (no zod defaults or stripping).
      parse: (args: unknown) => {
        validating.parse(args);
        return args;
      },
    });
  }
}

function describe(tool: McpToolInfo): string {
  const text = tool.description ?? tool.title ?? '';
  return text.trim() === '' ? `MCP tool ${tool.name}` : text;
}

function withoutSchemaKey(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = structuredClone(schema);
  return rest;
}
