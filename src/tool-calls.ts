/**
 * Tool types that do not refer to an agent: schemas, views, calls and results. Both sides of the
 * thread boundary use them. A tool's definition, context and registry carry the Agent and stay with it
 * in src/types.ts (they refer to each other, and the import check admits no circle).
 */
import type { MessagePart } from './content-part.js';

export type JsonSchemaObject = { [key: string]: unknown };

/** How a tool call may share its turn with others (SPEC §7.2): in the rolling pool, or alone as a barrier. */
export type ConcurrencyClass = 'parallel' | 'exclusive';

export type ToolFilter = { allow?: string[]; deny?: string[] };

export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchemaObject;
}

export interface ToolView {
  names: string[];
  schemas: ToolSchema[];
  has(name: string): boolean;
}

export interface ToolResult {
  isError: boolean;
  content: string;
  value?: unknown;
  error?: { code?: string; message: string };
  /** The arguments (JSON) the tool ran with when createBrood's beforeToolCall hook rewrote the model's. */
  rewrittenArguments?: string;
  /** What the model reads when the result has media (an MCP tool's image): every part in order; `content` is its text. */
  parts?: MessagePart[];
}

export interface ToolCallRequest {
  name: string;
  arguments: unknown;
  callId?: string;
  signal?: AbortSignal;
  /** Becomes the call's `ctx.context` (the per-request context of the run it serves). */
  context?: unknown;
}

export type ToolPresentation = false | { description?: string; parameters?: JsonSchemaObject };

/** What a tool's `approval`, the runtime's `policy` and a verdict say about one call (docs/approvals.md). */
export type ApprovalVerdict = 'allow' | 'deny' | 'ask';
