/**
 * Every session event brood writes, by type: the one place their `data` shapes are written down. The
 * driver's emits, the parent's mirror and appends, restore, the host event stream and the CLI all
 * name their events through these types, so a field renamed here is renamed everywhere or fails to
 * compile.
 *
 * The public `SessionEvent` (SPEC §6) stays `{ type: string; data: Record<string, unknown> }`: a
 * store may hold events of types this version does not know. Readers narrow with `knownEvent`.
 */
import type { MessagePart } from '../models/content-parts.js';
import type { ChatMessage, ModelFinish, ReasoningBlock, ToolCallRecord } from '../models/types.js';
import type { Budget } from '../scheduler/types.js';
import type { CodeMode, JsonSchemaObject, ModelRoute, SessionEvent, StopReason, ToolFilter, Usage } from '../types.js';

/** How a message that is not a turn of its own reaches an agent (a child's report; SPEC §16 "Reports"). */
export type MessageDelivery = 'next-step' | 'quiet';

/** What a top-level agent's session starts with (resume restores these settings). */
export type AgentDescriptorData = {
  model: ModelRoute;
  codeMode: CodeMode;
  maxSteps?: number;
  persona?: string;
  toolFilter?: ToolFilter;
  /** createAgent's budget: every turn's, restored with the agent. */
  budget?: Budget;
};

/** What a child's session starts with; an out-of-process provider adds its own fields (e.g. `acp`). */
export type SubagentDescriptorData = {
  provider: string;
  mode: 'one-shot' | 'continuable';
  model: ModelRoute;
  runner?: 'inline' | 'external' | 'queue';
  label?: string;
  persona?: string;
  toolFilter?: ToolFilter;
  maxSteps?: number;
  /** A continuable child's default report delivery, when its start gave one. */
  reportDelivery?: MessageDelivery;
  /** A continuable child's report size cap in UTF-8 bytes, when its start gave one. */
  maxReportBytes?: number;
  /** The child's approval rule (its delegation tool's, tightened by its ancestry). */
  approvals?: 'deny' | 'ask';
  /** A continuable child's budget ceiling (its delegation tool's), for each of its turns. */
  budget?: Budget;
  /** The parent's tool call that started this child (a resumed parent finds its child by it). */
  callId?: string;
  [providerField: string]: unknown;
};

/**
 * What a driver stamps on the events that start and end its work (a model request and its answer, a
 * call it runs itself and its result): its own clock when the fact happened, epoch milliseconds at
 * microsecond resolution. The event's `time` is when the parent logged it; sessions written before
 * this field lack it.
 */
export type DriverStamp = { at?: number };

export type SessionEventDataMap = {
  'agent/descriptor': AgentDescriptorData;
  'subagent/descriptor': SubagentDescriptorData;
  'subagent/model-selection-enabled': Record<string, never>;
  /**
   * The conversation a top-level agent was created with (`createAgent({ history })`), as the model
   * history it continues; written once, before its first turn. A fork child's seed carries it along.
   */
  'agent/history': { messages: ChatMessage[] };
  /**
   * `delivery` marks a message that does not claim a turn of its own the usual way (a child's report):
   * `next-step` joins a running turn at its next model step, `quiet` joins the next turn. `from` is the
   * child a report came from. `budget` and `outputSchema` (as JSON Schema): a run's or a delegated
   * prompt's own, so the message keeps them if a crash comes before a turn claims it.
   */
  'user/message': {
    id: string;
    text: string;
    /** The message's content parts when it has media, base64 once (`text` is its text parts joined). */
    parts?: MessagePart[];
    source: string;
    delivery?: MessageDelivery;
    from?: string;
    budget?: Budget;
    outputSchema?: JsonSchemaObject;
    /** A continuable child's settlement notice: whose, and the last turn of the busy period it settles. */
    settles?: { childId: string; turn: number };
  };
  /**
   * `joined`: quiet messages taken with the claimed one, placed before it in the history. `budget` and
   * `outputSchema` (as JSON Schema): the claimed message's own (a run's options, a delegation's), so a
   * turn resumed after a crash keeps them.
   */
  'turn/start': {
    turn: number;
    messageIds: string[];
    joined?: string[];
    budget?: Budget;
    outputSchema?: JsonSchemaObject;
  };
  /** Messages a running turn took at a model step (after the step's tool results, before its next request). */
  'turn/join': { turn: number; messageIds: string[] };
  'turn/end': { turn: number; reason: StopReason; diagnostic?: string };
  'model/request': {
    provider: string;
    model: string;
    reasoningEffort?: string;
    maxTokens?: number;
    system: string;
    tools: string[];
    threadId: number;
    /** Set by the queue runner: the `brood host` process that ran the request. */
    host?: { name: string; pid: number };
  } & DriverStamp;
  'assistant/message': {
    /** A note from the adapter on an answer it gave (an option the model could not take): told to onDiagnostic. */
    diagnostic?: string;
    text: string;
    toolCalls: ToolCallRecord[];
    usage: Usage;
    finish: ModelFinish;
    reasoning?: ReasoningBlock[];
  } & DriverStamp;
  'tool/call': { callId: string; name: string; arguments: string; kind?: string; title?: string } & DriverStamp;
  'tool/result': {
    callId: string;
    name: string;
    isError: boolean;
    content: string;
    errorCode?: string;
    /** The arguments the tool ran with, when a beforeToolCall hook rewrote those of `tool/call`. */
    arguments?: string;
    /** The result's content parts when it has media (an MCP tool's image); `content` is their text. */
    parts?: MessagePart[];
  } & DriverStamp;
  /** Streamed text for subscribers: crosses the thread boundary with the driver's events, never logged. */
  'text/delta': { turn: number; delta: string };
  // What an out-of-process (ACP) child reports besides text and tool calls (src/acp/client/transcript.ts).
  'acp/thought': { text: string };
  'acp/plan': { entries: { content: string; priority: string; status: string }[] };
  'acp/permission': {
    toolCallId: string;
    title?: string;
    options: { optionId: string; kind: string }[];
    policy: string;
    decision: 'allow' | 'deny' | 'cancelled';
    optionId: string | null;
    note?: string;
  };
  'acp/fs': { op: 'read' | 'write'; path: string; ok: boolean; error?: string };
  /** A call parked for the host: logged before anyone is told of it; `args` are the model's. */
  'approval/request': { approvalId: string; callId: string; tool: string; args: unknown; viaCode: boolean };
  /** The decision, logged before it is applied; `args` are the host's replacement arguments, when it gave any. */
  'approval/resolved': {
    approvalId: string;
    callId: string;
    tool: string;
    decision: 'approved' | 'denied' | 'expired';
    by: 'host' | 'policy';
    args?: unknown;
    message?: string;
  };
  /** What a call approved after a restart returned (its turn had ended, so it has no tool/result). */
  'approval/result': { approvalId: string; callId: string; tool: string; isError: boolean; content: string };
};

export type SessionEventType = keyof SessionEventDataMap;

/** An event of type `T` as it is appended (the writer stamps `seq` and `time`). */
export type NewEventOf<T extends SessionEventType> = { type: T; data: SessionEventDataMap[T] };

/** Any event brood appends, discriminated on `type`. */
export type NewSessionEvent = { [T in SessionEventType]: NewEventOf<T> }[SessionEventType];

/** An event of type `T` as a store returns it. */
export type SessionEventOf<T extends SessionEventType> = NewEventOf<T> & { seq: number; time: number };

/** Any logged event of a known type, discriminated on `type`. */
export type KnownSessionEvent = { [T in SessionEventType]: SessionEventOf<T> }[SessionEventType];

/** The types a driver emits (everything else is written by the parent); an ACP child's driver adds `acp/*`. */
export type DriverEventType =
  | 'model/request'
  | 'assistant/message'
  | 'tool/call'
  | 'tool/result'
  | 'text/delta'
  | 'acp/thought'
  | 'acp/plan'
  | 'acp/permission'
  | 'acp/fs';
export type DriverEmittedEvent = Extract<NewSessionEvent, { type: DriverEventType }>;

/** Driver-to-parent event type for streamed text: forwarded to subscribers, never written to the log. */
export const TEXT_DELTA_EVENT = 'text/delta' satisfies DriverEventType;

/** An event whose type this version may not know (a provider's seed, a newer writer's event). */
export interface ForeignEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A tool call's arguments as a value: the parsed JSON, or the raw text when it is not valid JSON. */
export function parsedToolArguments(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** The marker a child inherits when its parent may choose models (read back on restore). */
export function modelSelectionEvents(enabled: boolean): NewEventOf<'subagent/model-selection-enabled'>[] {
  return enabled ? [{ type: 'subagent/model-selection-enabled', data: {} }] : [];
}

const KNOWN_TYPES: Record<SessionEventType, true> = {
  'agent/descriptor': true,
  'subagent/descriptor': true,
  'subagent/model-selection-enabled': true,
  'agent/history': true,
  'user/message': true,
  'turn/start': true,
  'turn/join': true,
  'turn/end': true,
  'model/request': true,
  'assistant/message': true,
  'tool/call': true,
  'tool/result': true,
  'text/delta': true,
  'acp/thought': true,
  'acp/plan': true,
  'acp/permission': true,
  'acp/fs': true,
  'approval/request': true,
  'approval/resolved': true,
  'approval/result': true,
};

export function isKnownType(type: string): type is SessionEventType {
  return Object.hasOwn(KNOWN_TYPES, type);
}

/**
 * The typed view of a logged event, or undefined for a type this version does not know. The data is
 * brood's own writing (the store checked the envelope at append and at load), so it is not re-parsed.
 */
export function knownEvent(event: SessionEvent): KnownSessionEvent | undefined;
export function knownEvent(event: ForeignEvent): NewSessionEvent | undefined;
export function knownEvent(event: ForeignEvent): NewSessionEvent | undefined {
  return isKnownType(event.type) ? (event as NewSessionEvent) : undefined;
}

/** `event` typed as type `T` when it is one. */
export function isEventOf<T extends SessionEventType>(
  event: SessionEvent,
  type: T,
): event is SessionEvent & SessionEventOf<T> {
  return event.type === type;
}

/**
 * The accepted messages a turn event puts into the history, in history order (a turn's joined quiet
 * messages come before the message it claimed); none for other events.
 */
export function messagesTaken(event: ForeignEvent): readonly string[] {
  const known = knownEvent(event);
  if (known?.type === 'turn/join') return known.data.messageIds;
  if (known?.type !== 'turn/start') return [];
  const { joined, messageIds } = known.data;
  return joined === undefined || joined.length === 0 ? messageIds : [...joined, ...messageIds];
}
