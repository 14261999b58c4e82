/** Types shared across modules. Public ones are re-exported from src/index.ts. */
import type { Disposer } from './disposer.js';

export type { Disposer } from './disposer.js';

export type JsonSchemaObject = { [key: string]: unknown };

export type StopReason = 'completed' | 'aborted' | 'error' | 'max-tokens' | 'refusal';
export type CodeMode = 'native' | 'code' | 'both';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelRoute {
  provider: string;
  model: string;
  reasoningEffort?: string;
  maxTokens?: number;
}

export interface TurnResult {
  output: string;
  stopReason: StopReason;
  usage: Usage;
  diagnostic?: string;
}

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
}

export interface ToolCallRequest {
  name: string;
  arguments: unknown;
  callId?: string;
  signal?: AbortSignal;
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
}

export type ToolPresentation = false | { description?: string; parameters?: JsonSchemaObject };

/** What defineTool returns; parameters are already normalised to JSON Schema plus a validator. */
export interface ToolDefinition<A = unknown> {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchemaObject;
  /** Validates model- or host-supplied arguments; throws BroodError INVALID_ARGS. */
  readonly parse: (args: unknown) => A;
  readonly execute: (args: A, ctx: ToolContext) => unknown;
  readonly concurrencySafe?: boolean | ((args: A) => boolean);
  readonly forAgent?: (agent: Agent | undefined) => ToolPresentation;
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
  send(message: string): Promise<string>;
  run(message: string, opts?: { signal?: AbortSignal }): Promise<TurnResult>;
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

export interface SessionStore {
  create(header: SessionHeader): Promise<void>;
  append(id: string, events: SessionEvent[]): Promise<void>;
  flush(id: string): Promise<void>;
  read(id: string): Promise<{ header: SessionHeader; events: SessionEvent[] }>;
  list(): Promise<SessionHeader[]>;
}
