/**
 * Model-side types: serializable provider configs (shipped to workers) and the adapter contract. All
 * public: src/models/public.ts exports this module whole.
 */
import type { ModelRoute, ToolSchema, Usage } from '../types.js';
import type { MessagePart } from './content-parts.js';

export interface ModelInfo {
  id: string;
  efforts: string[];
  defaultEffort?: string;
  maxTokens?: number;
}

/**
 * A provider config is plain data: it is structured-cloned into worker threads, where the adapter is
 * loaded by `kind` (or from `moduleUrl` for custom adapters).
 */
export interface ModelProviderConfig {
  kind: 'scripted' | 'openai-compatible' | 'anthropic-compatible' | 'module' | 'ai-sdk';
  id: string;
  name: string;
  models: ModelInfo[];
  acceptsUnlistedModels: boolean;
  /** Adapter-specific, serializable options (scripts, baseURL, apiKeyEnv, ...). */
  options: Record<string, unknown>;
  /**
   * For kind 'module': a file: URL whose module exports `createAdapter(config): ModelAdapter`; for kind
   * 'ai-sdk' (module shape): the module whose export builds the LanguageModels.
   */
  moduleUrl?: string;
}

export interface ToolCallRecord {
  callId: string;
  name: string;
  /** The raw argument text the model sent (may be malformed JSON). */
  arguments: string;
}

/**
 * A provider's opaque reasoning record (Anthropic `thinking` / `redacted_thinking` blocks), kept with
 * the assistant message so it can be sent back verbatim, as the provider requires within a tool loop.
 */
export type ReasoningBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

/**
 * One message of a conversation. A user or tool message with media keeps every part in `parts` (text
 * parts included, in order); its `text`/`content` is then the text parts joined, for everything that
 * reads text only (token estimates, telemetry, the CLI). Without `parts` the message is its text.
 */
export type ChatMessage =
  | { role: 'user'; text: string; parts?: MessagePart[] }
  | { role: 'assistant'; text: string; toolCalls: ToolCallRecord[]; reasoning?: ReasoningBlock[] }
  | { role: 'tool'; callId: string; name: string; content: string; isError: boolean; parts?: MessagePart[] };

export type ModelFinish = 'stop' | 'tool-calls' | 'max-tokens' | 'refusal' | 'error';

export interface ModelRequest {
  route: ModelRoute;
  system: string;
  /** The whole conversation, oldest first (a fork child's inherited seed included). */
  messages: ChatMessage[];
  /** Index of the first message that is the agent's own (0, or the seed length for a fork child). */
  ownStart: number;
  tools: ToolSchema[];
  signal: AbortSignal;
  /** Streaming progress (text deltas), for live views. Optional for adapters to call. */
  onTextDelta?: (delta: string) => void;
  /** W3C `traceparent`/`tracestate` of the turn (createBrood telemetry): HTTP adapters send them as headers. */
  traceHeaders?: Record<string, string>;
  /**
   * Set when the request is governed (createBrood `limits`): a 429/503 is not slept on by the adapter
   * but handed here with its retry-after (undefined when the server named none); resolves when the
   * parent admits the retry. The pause then holds every agent's requests to that provider.
   */
  retryGate?: (retryAfterMs: number | undefined) => Promise<void>;
  /**
   * Set for a governed request to a paced provider, handed only to adapters that send at it (the HTTP
   * adapters): awaited right before each send — after the body is built — so the provider reads it at
   * its slot; retryGate then only asks again. Other adapters' requests wait for their slot before
   * `request` is called.
   */
  atSlot?: () => Promise<void>;
  /** With atSlot: told when each attempt is written to its socket (epoch ms), which the schedule follows. */
  onWrite?: (at: number) => void;
  /** The parent's model proxy (DriverGateway.modelProxy): how a proxied AI SDK model's calls cross. */
  modelProxy?: (call: unknown) => Promise<unknown>;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCallRecord[];
  finish: ModelFinish;
  usage: Usage;
  /** Why a request ended in `error` (HTTP status, network cause, malformed stream, ...). */
  diagnostic?: string;
  /** Reasoning blocks to keep with this assistant message and send back on later requests. */
  reasoning?: ReasoningBlock[];
}

/** Runs inside the worker. Rejects with BroodError ABORTED when `signal` aborts; other failures resolve with finish 'error'. */
export interface ModelAdapter {
  request(request: ModelRequest): Promise<ModelResponse>;
}
