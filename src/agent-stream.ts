/** Streaming a run (agent.stream(); docs/service.md): the stream and the AI SDK UI message chunks brood writes. */
import type { ServerResponse } from 'node:http';
import type { BroodEvent } from './host-events.js';
import type { StopReason, TurnResult, Usage } from './turn-result.js';

/**
 * One turn as it happens. Its events, its UI message stream, its Response and its piping all read the
 * same events once: whichever is used first consumes the stream, and a second use throws INVALID_ARGS.
 */
export interface AgentStream<S = unknown> extends AsyncIterable<BroodEvent> {
  /** What run() would resolve; settles whether or not the stream is read. */
  readonly result: Promise<TurnResult<S>>;
  /** The turn as AI SDK UI message chunks (protocol v1). */
  toUIMessageStream(): ReadableStream<UIMessageChunk>;
  /** A web Response carrying the UI message stream as server-sent events (what useChat() reads). */
  toUIMessageStreamResponse(init?: UIMessageStreamResponseInit): Response;
  /** The same onto a Node ServerResponse; resolves once the response has ended. */
  pipeUIMessageStreamToResponse(response: ServerResponse, init?: UIMessageStreamResponseInit): Promise<void>;
}

export interface UIMessageStreamResponseInit {
  status?: number;
  statusText?: string;
  /** Added to the protocol's own headers. */
  headers?: Record<string, string>;
}

/** A child's progress as a `data-subagent` part: its accumulated text and whether its run has ended. */
export interface SubagentProgress {
  agentId: string;
  parentId: string;
  depth: number;
  text: string;
  status: 'running' | StopReason;
}

/** What the UI message chunk `finish` carries as its messageMetadata. */
export interface TurnMetadata {
  usage: Usage;
  stopReason: StopReason;
}

/** The chunks brood writes, each a chunk of the AI SDK UI message stream protocol v1. */
export type UIMessageChunk =
  | { type: 'start' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'data-subagent'; id: string; data: SubagentProgress }
  | { type: 'error'; errorText: string }
  | { type: 'finish'; messageMetadata?: TurnMetadata };
