/** What the span builder keeps per agent: the facts it names spans by and the spans in flight. */
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { ChatMessage } from '../models/types.js';

/** What an agent is, for span names and attributes (from its descriptor or its creation). */
export interface AgentFacts {
  id: string;
  parentId: string | undefined;
  depth: number;
  /** The parent's mirror of the agent's model history (read only with `captureContent`). */
  readonly history?: readonly ChatMessage[];
}

/** How a child's runs attach to the parent's trace (decided when the parent starts it). */
export interface ChildOrigin {
  mode: 'foreground' | 'background' | 'continuable';
  provider: string;
  /** The parent's `execute_tool` span that started the child, when one did. */
  call: Span | undefined;
}

export interface SpanHooks {
  /** A chat span ended: duration in seconds and token counts, for the metrics. */
  chatEnded?(attributes: Attributes, seconds: number, usage: { input: number; output: number } | undefined): void;
}

export interface OpenChat {
  provider: string;
  model: string;
  start: number;
  /** With `captureContent`: the request's system instructions and input messages. */
  content: Attributes | undefined;
}

export interface OpenCall {
  span: Span;
  name: string;
}

/** One agent's spans in flight. */
export class AgentSpans {
  label: string | undefined;
  /** Where the driver ran when not the runtime's default runner (descriptor: inline, queue, external). */
  driver: string | undefined;
  provider: string | undefined;
  origin: ChildOrigin | undefined;
  /**
   * The context of the message a host run() or send() gave, by message id (the turn's parent). Only
   * the host's agents have one, so it is made on first use (a fan-out makes hundreds of children).
   */
  hostContexts: Map<string, Context> | undefined;
  turn: { span: Span; context: Context; number: number } | undefined;
  /** The model request in flight: its span is built when it is answered (see endChat). */
  chat: OpenChat | undefined;
  /** With `captureContent`: the history the driver had sent when the event being applied was logged. */
  sentHistory: readonly ChatMessage[] | undefined;
  readonly calls = new Map<string, OpenCall>();
  /** Calls from inside run_code programs (never logged: their spans end when the sandbox is answered). Made on first use. */
  codeCalls: Map<string, Span> | undefined;

  constructor(readonly facts: AgentFacts) {}
}
