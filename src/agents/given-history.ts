/**
 * A conversation the host already has, handed to `createAgent({ history })`: checked once, at the
 * boundary, and kept as the model history the agent's first turn continues. It is written to the
 * session as one `agent/history` event (read back by resume, inherited by a fork child's seed like a
 * completed turn) and never given to a fresh child.
 */
import { BroodError, errorMessage } from '../errors.js';
import {
  type ContentPart,
  checkCarriable,
  checkInput,
  DEFAULT_MAX_INPUT_BYTES,
  isMessageParts,
  type MessagePart,
  type PartFormat,
  partsField,
  textWithPlaceholders,
} from '../models/content-parts.js';
import type { ChatMessage, ToolCallRecord } from '../models/types.js';
import type { NewEventOf } from '../sessions/event-types.js';
import { isPlainObject } from '../util/plain.js';
import { readUntrusted } from '../util/untrusted.js';

/** One message of a host's conversation; `content` is a string or content parts. */
export type HistoryMessage =
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | ContentPart[]; toolCalls?: HistoryToolCall[] }
  | { role: 'tool'; callId: string; content: string | ContentPart[] };

/** A tool call an assistant message made: `arguments` is an object or its JSON text. */
export interface HistoryToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown> | string;
}

export interface HistoryLimits {
  maxInputBytes: number;
  /** The wire format of the agent's provider, when it carries only some media types. */
  format: PartFormat | undefined;
}

const KEYS: Record<HistoryMessage['role'], readonly string[]> = {
  user: ['role', 'content'],
  assistant: ['role', 'content', 'toolCalls'],
  tool: ['role', 'callId', 'content'],
};
const CALL_KEYS = ['id', 'name', 'arguments'];

/**
 * The host's history as brood keeps it, or INVALID_ARGS naming the message at fault: a role other than
 * user, assistant or tool (`system` included: the system prompt is brood's), an unknown key, bad
 * content (the content-part rules and `maxInputBytes`; media a provider cannot carry; media in an
 * assistant message), a malformed tool call, a tool call no tool message answers before the next
 * message, or a tool message that answers no open call. Every getter of the input runs once, here.
 */
export function checkHistory(input: unknown, limits: HistoryLimits): ChatMessage[] {
  return readUntrusted('INVALID_ARGS', 'createAgent history', () => checkMessages(input, limits));
}

function checkMessages(input: unknown, limits: HistoryLimits): ChatMessage[] {
  if (!Array.isArray(input)) throw invalid('createAgent history must be an array of messages');
  const calls = new CallLedger();
  const messages: ChatMessage[] = [];
  for (let index = 0; index < input.length; index++) {
    const where = `history[${index}]`;
    const entry: unknown = input[index];
    if (!isPlainObject(entry)) throw invalid(`${where} is not a plain object ({ role, content, … })`);
    const role = checkRole(entry.role, where);
    checkKeys(entry, KEYS[role], `${where} (${role})`);
    if (role === 'tool') {
      messages.push(toolMessage(entry, where, calls, limits));
      continue;
    }
    calls.expectNone(where, role);
    messages.push(role === 'user' ? userMessage(entry, where, limits) : assistantMessage(entry, where, calls, limits));
  }
  calls.expectNone('the end of the history', 'last');
  return messages;
}

function checkRole(role: unknown, where: string): HistoryMessage['role'] {
  if (role === 'user' || role === 'assistant' || role === 'tool') return role;
  if (role === 'system')
    throw invalid(
      `${where} has role 'system': the system prompt is brood's (persona, prompt sections), not the history's`,
    );
  throw invalid(`${where} has role ${JSON.stringify(role) ?? String(role)} (expected 'user', 'assistant' or 'tool')`);
}

function checkKeys(entry: Record<string, unknown>, allowed: readonly string[], where: string): void {
  const unknown = Object.keys(entry).find((key) => !allowed.includes(key));
  if (unknown !== undefined)
    throw invalid(`${where} has an unknown key '${unknown}' (it takes ${allowed.map((key) => `'${key}'`).join(', ')})`);
}

function userMessage(entry: Record<string, unknown>, where: string, limits: HistoryLimits): ChatMessage {
  const { text, parts } = checkContent(entry.content, where, limits);
  return { role: 'user', text, ...partsField(parts) };
}

function assistantMessage(
  entry: Record<string, unknown>,
  where: string,
  calls: CallLedger,
  limits: HistoryLimits,
): ChatMessage {
  // Only the text of an assistant message reaches a model: a medium there has no place to go.
  const { text, parts } = checkContent(entry.content, where, {
    maxInputBytes: limits.maxInputBytes,
    format: undefined,
  });
  const medium = parts?.find((part) => part.type !== 'text');
  if (medium !== undefined)
    throw invalid(`${where} is an assistant message with an ${medium.type} part: it takes only text`);
  const toolCalls = checkToolCalls(entry.toolCalls, where);
  calls.open(where, toolCalls);
  return { role: 'assistant', text, toolCalls };
}

function toolMessage(
  entry: Record<string, unknown>,
  where: string,
  calls: CallLedger,
  limits: HistoryLimits,
): ChatMessage {
  const { callId } = entry;
  if (typeof callId !== 'string' || callId === '') throw invalid(`${where} (tool) has no non-empty string 'callId'`);
  const name = calls.answer(callId, where);
  const { text, parts } = checkContent(entry.content, where, limits);
  // Like a tool's own result: `content` is what a text-only reader sees, each medium a placeholder.
  const content = parts === undefined ? text : textWithPlaceholders(parts);
  return { role: 'tool', callId, name, content, isError: false, ...partsField(parts) };
}

function checkContent(content: unknown, where: string, limits: HistoryLimits): { text: string; parts?: MessagePart[] } {
  if (content === undefined) throw invalid(`${where} has no 'content' (a string or content parts)`);
  try {
    const checked = checkInput(content, limits.maxInputBytes);
    if (limits.format !== undefined) checkCarriable(checked.parts, limits.format);
    return checked;
  } catch (error) {
    if (!(error instanceof BroodError)) throw error;
    throw new BroodError('INVALID_ARGS', `${where}: ${error.message}`, error.details ? { details: error.details } : {});
  }
}

function checkToolCalls(value: unknown, where: string): ToolCallRecord[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid(`${where} has 'toolCalls' that is not an array`);
  return value.map((call: unknown, index) => {
    const at = `${where}.toolCalls[${index}]`;
    if (!isPlainObject(call)) throw invalid(`${at} is not a plain object ({ id, name, arguments })`);
    checkKeys(call, CALL_KEYS, at);
    const { id, name } = call;
    if (typeof id !== 'string' || id === '') throw invalid(`${at} has no non-empty string 'id'`);
    if (typeof name !== 'string' || name === '') throw invalid(`${at} has no non-empty string 'name'`);
    return { callId: id, name, arguments: argumentText(call.arguments, at) };
  });
}

/** A call's arguments as the JSON text a model wrote: an object is serialised, a string must be one's JSON. */
function argumentText(value: unknown, at: string): string {
  if (typeof value === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw invalid(`${at} has 'arguments' that is a string but not JSON (give an object or its JSON text)`);
    }
    if (!isPlainObject(parsed)) throw invalid(`${at} has 'arguments' whose JSON is not an object`);
    return value;
  }
  if (!isPlainObject(value)) throw invalid(`${at} has 'arguments' that is neither an object nor its JSON text`);
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw invalid(`${at} has 'arguments' that cannot be written as JSON: ${errorMessage(error)}`);
  }
}

/**
 * The tool calls of the last assistant message, until each is answered: a tool message must answer
 * one of them, and no other message may come while any is open (models take results right after calls).
 */
class CallLedger {
  private readonly made = new Set<string>();
  private pending = new Map<string, string>();
  private openedAt = '';

  open(where: string, calls: readonly ToolCallRecord[]): void {
    for (const call of calls) {
      if (this.made.has(call.callId))
        throw invalid(`${where} makes a call with id '${call.callId}' that an earlier call has`);
      this.made.add(call.callId);
    }
    this.pending = new Map(calls.map((call) => [call.callId, call.name]));
    this.openedAt = where;
  }

  /** The name of the call a tool message answers. */
  answer(callId: string, where: string): string {
    const name = this.pending.get(callId);
    if (name === undefined) {
      const why = this.made.has(callId) ? 'which is answered already' : 'which no assistant message before it made';
      throw invalid(`${where} answers call '${callId}', ${why}`);
    }
    this.pending.delete(callId);
    return name;
  }

  expectNone(where: string, role: string): void {
    if (this.pending.size === 0) return;
    const ids = [...this.pending.keys()].map((id) => `'${id}'`).join(', ');
    const what = role === 'last' ? where : `${where} (${role})`;
    throw invalid(`${this.openedAt} made call(s) ${ids} that no tool message answers before ${what}`);
  }
}

function invalid(message: string): BroodError {
  return new BroodError('INVALID_ARGS', message);
}

/** The event that writes a checked history to the agent's session (before its first turn). */
export function historyEvent(messages: ChatMessage[]): NewEventOf<'agent/history'> {
  return { type: 'agent/history', data: { messages } };
}

/**
 * An `agent/history` event's messages read back from a session: checked like anything read from a
 * store (a malformed one is SESSION_CORRUPT), so a resumed agent sends its model only well-formed messages.
 */
export function loggedHistory(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || !value.every(isLoggedMessage))
    throw new BroodError('SESSION_CORRUPT', 'the history the agent was created with (agent/history) is malformed');
  return value;
}

function isLoggedMessage(value: unknown): value is ChatMessage {
  if (!isPlainObject(value)) return false;
  const parts = value.parts === undefined || isMessageParts(value.parts);
  switch (value.role) {
    case 'user':
      return typeof value.text === 'string' && parts;
    case 'assistant':
      return typeof value.text === 'string' && Array.isArray(value.toolCalls) && value.toolCalls.every(isCallRecord);
    case 'tool':
      return (
        typeof value.callId === 'string' &&
        typeof value.name === 'string' &&
        typeof value.content === 'string' &&
        typeof value.isError === 'boolean' &&
        parts
      );
    default:
      return false;
  }
}

function isCallRecord(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    typeof value.callId === 'string' &&
    typeof value.name === 'string' &&
    typeof value.arguments === 'string'
  );
}

/** createAgent's `history` checked against the runtime's limits and the route's provider; none is []. */
export function givenHistory(
  input: unknown,
  deps: {
    limits: { maxInputBytes?: number | undefined };
    partFormat?: ((provider: string) => PartFormat | undefined) | undefined;
  },
  provider: string,
): ChatMessage[] {
  if (input === undefined) return [];
  const maxInputBytes = deps.limits.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
  return checkHistory(input, { maxInputBytes, format: deps.partFormat?.(provider) });
}
