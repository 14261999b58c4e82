/**
 * The Agent and what it carries, and the public types everything imports from here. The Agent exposes
 * its tool and prompt registries, and their tools' and sections' contexts carry the Agent, so they
 * share this file (split, they would form an import circle, type-only ones included). The vocabularies
 * it names are leaves beside it, re-exported here: host events (src/host-events.ts), the stream of a
 * run (src/agent-stream.ts), tool calls and results (src/tool-calls.ts), how a turn ended
 * (src/turn-result.ts). They sit at the root, not in events/ or tools/: the machinery there imports
 * the Agent, so a type file inside would make each folder both above and below this one.
 */
import type { z } from 'zod';
import type { AgentStream } from './agent-stream.js';
import type { ContentPart } from './content-part.js';
import type { AgentEventsOptions, BroodEvent } from './host-events.js';
import type { Budget } from './scheduler/types.js';
import type {
  ApprovalVerdict,
  JsonSchemaObject,
  ToolCallRequest,
  ToolFilter,
  ToolPresentation,
  ToolResult,
  ToolView,
} from './tool-calls.js';
import type { TurnResult } from './turn-result.js';
import type { Disposer } from './util/disposer.js';

export type * from './agent-stream.js';
export type * from './host-events.js';
export type * from './tool-calls.js';
export type { StopReason, TurnResult, Usage, UsageNode } from './turn-result.js';
export { STOP_REASONS } from './turn-result.js';
export type { Disposer } from './util/disposer.js';

export type CodeMode = 'native' | 'code' | 'both';

/** What run, send and stream take: text, or content parts (text, images, files). */
export type MessageInput = string | ContentPart[];

/** createBrood's `codeResourceLimits`: what each run_code program may use (defaults in src/defaults.ts). */
export interface CodeResourceLimits {
  /** The program's heap in MiB (8–1024, default 64). The engine's whole memory is capped a little above it. */
  memoryMb?: number;
  /** The program's stack in KiB (64–4096, default 1024): roughly 5 nested calls per KiB. */
  stackKb?: number;
  /** Logged lines plus the return value, UTF-8 bytes (1 KiB–64 MiB, default 1 MiB). */
  maxOutputBytes?: number;
  /** Tool calls one program may make (1–100,000, default 1,000). */
  maxToolCalls?: number;
}

export type ResolvedCodeLimits = Required<CodeResourceLimits>;

export interface ModelRoute {
  provider: string;
  model: string;
  reasoningEffort?: string;
  maxTokens?: number;
}

export interface SendOptions {
  /** Already aborted, or aborted before the message is accepted: rejects ABORTED and the message never runs. */
  signal?: AbortSignal;
}

export interface RunOptions extends SendOptions {
  /** This run's deadline and token budget; tightened by the agent's own (see docs/limits-and-budgets.md). */
  budget?: Budget;
  /** The model answers through a `structured_output` tool with these parameters (zod or JSON Schema). */
  outputSchema?: z.ZodType | JsonSchemaObject;
  /**
   * Per-request context (any structured-clone value): every tool of this run reads it as `ctx.context`,
   * at every depth of delegation. Never stored and never shown to the model (docs/service.md).
   */
  context?: unknown;
}

export interface ToolRegistry {
  register(tool: ToolDefinition): Disposer;
  restrict(filter: ToolFilter): Disposer;
  view(): ToolView;
  execute(call: ToolCallRequest): Promise<ToolResult>;
  sdk(): string;
  on(event: 'change', fn: () => void): Disposer;
}

export interface ToolContext {
  callId: string;
  agent: Agent | undefined;
  signal: AbortSignal;
  /** The per-request context of the run this call serves (`run(text, { context })`); see docs/tools.md. */
  context?: unknown;
}

/** What defineTool returns; parameters are already normalised to JSON Schema plus a validator. */
export interface ToolDefinition<A = unknown> {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchemaObject;
  /** Validates model- or host-supplied arguments; throws BroodError INVALID_ARGS. */
  readonly parse: (args: unknown) => A;
  readonly execute: (args: A, ctx: ToolContext) => unknown;
  readonly concurrencySafe?: boolean | ((args: A) => boolean);
  /** Safe to run twice: a call whose outcome a crash left unknown runs again on resume (docs/sessions.md). */
  readonly idempotent?: boolean;
  readonly forAgent?: (agent: Agent | undefined) => ToolPresentation;
  /** Whether a call needs the host's approval first (see docs/approvals.md). */
  readonly approval?: 'ask' | ((args: A, ctx: ToolContext) => ApprovalVerdict | Promise<ApprovalVerdict>);
}

export interface PromptContext {
  agent: Agent | undefined;
  tools: ToolView;
}

export interface PromptSection {
  name: string;
  order?: number;
  tool?: string;
  text: string | ((ctx: PromptContext) => string);
}

export interface AssembledPrompt {
  system: string;
  sections: { name: string; text: string }[];
}

export interface PromptRegistry {
  register(section: PromptSection): Disposer;
  variable(name: string, value: (ctx: PromptContext) => string | undefined): Disposer;
  assemble(): AssembledPrompt;
}

export type AgentStatus = 'idle' | 'running' | 'disposed';

export interface Agent {
  readonly id: string;
  readonly depth: number;
  readonly parentId: string | undefined;
  readonly status: AgentStatus;
  readonly tools: ToolRegistry;
  readonly prompt: PromptRegistry;
  /** A message is text or content parts (images, files); see docs/agents-and-turns.md, Images and files. */
  send(message: MessageInput, opts?: SendOptions): Promise<string>;
  run<S extends z.ZodType>(
    message: MessageInput,
    opts: RunOptions & { outputSchema: S },
  ): Promise<TurnResult<z.output<S>>>;
  run(message: MessageInput, opts?: RunOptions): Promise<TurnResult>;
  /** run() as it happens: this turn's events (children's included) and the UI message stream (docs/service.md). */
  stream<S extends z.ZodType>(input: MessageInput, opts: RunOptions & { outputSchema: S }): AgentStream<z.output<S>>;
  stream(input: MessageInput, opts?: RunOptions): AgentStream;
  /** This agent's events (and, by default, its descendants'); see BroodEvent. */
  events(options?: AgentEventsOptions): AsyncIterable<BroodEvent>;
  whenIdle(): Promise<void>;
  cancel(cause?: 'user' | 'parent'): void;
  dispose(): Promise<void>;
}

export interface SessionHeader {
  id: string;
  createdAt: number;
  parentSession?: string;
  origin?: 'subagent';
  delegationDepth: number;
  seedLength?: number;
  model: ModelRoute;
}

export interface SessionEvent {
  seq: number;
  time: number;
  type: string;
  data: Record<string, unknown>;
}

/** brood.recover(): one top-level agent whose interrupted turn was resumed. */
export interface RecoveredTurn {
  agent: Agent;
  /** The interrupted turn, continued. */
  turn: number;
  result: Promise<TurnResult>;
}

export interface RecoverOptions {
  signal?: AbortSignal;
  /** The per-request context the resumed turns' tools read (it is never stored, so it is given again). */
  context?: unknown;
}

export interface SessionStore {
  create(header: SessionHeader): Promise<void>;
  append(id: string, events: SessionEvent[]): Promise<void>;
  flush(id: string): Promise<void>;
  read(id: string): Promise<{ header: SessionHeader; events: SessionEvent[] }>;
  list(): Promise<SessionHeader[]>;
  /**
   * Optional single-writer ownership (fileSessions implements it with a lock file): the runtime calls
   * it before it writes a session it did not just create, and for every session it creates; it must
   * reject with SESSION_LOCKED while another writer holds the session.
   */
  acquire?(id: string): Promise<void>;
  /** Gives up what acquire() took; called when the agent is disposed. */
  release?(id: string): Promise<void>;
}
