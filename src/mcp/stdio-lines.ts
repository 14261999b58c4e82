/**
 * What one stdout line of a stdio MCP server is to the client. A line that answers a request but
 * cannot be used — malformed (`result: null`), or over the size limit — becomes an error answer to
 * that request, made up here with the cause in one line: the call fails at once instead of waiting
 * out its timeout, and the server, which only sent one bad message, keeps serving. Any other
 * unreadable line (a server logging to stdout) is skipped and reported, as the SDK does.
 */
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { idFromHead, type JsonRpcId, type Line } from '../util/json-lines.js';

/** The longest message read from a server: the SDK's own stdio default, 10 MB. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** The `data` of made-up answers: an McpError carrying one of these is brood's, not the server's. */
const madeUp = new WeakSet<object>();

/** A JSON-RPC message, an Error for a line that is skipped, or undefined for a blank line. */
export function messageOf(line: Line): JSONRPCMessage | Error | undefined {
  if (line.kind === 'oversized') {
    const over = `${line.bytes} bytes, over the ${MAX_MESSAGE_BYTES}-byte message limit`;
    const id = idFromHead(line.head);
    return id === undefined ? new Error(`a message on stdout of ${over}`) : madeUpAnswer(id, `its answer was ${over}`);
  }
  const text = line.bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return error as Error;
  }
  return checkedMessage(value, () => `a line on stdout that is not a JSON-RPC message: ${clip(text)}`);
}

/**
 * A parsed message as the client may take it: itself when it is a JSON-RPC message, a made-up error
 * answer when it answers a request but is malformed, an Error (`unreadable` says what it was) otherwise.
 * Shared by the stdio transport and the HTTP transports' checking fetch (http-answers.ts).
 */
export function checkedMessage(value: unknown, unreadable: () => string): JSONRPCMessage | Error {
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  return answerToMalformed(value) ?? new Error(unreadable());
}

/**
 * For a value already known not to be a JSON-RPC message: a made-up error answer when it answers a
 * request (has an id, no method), undefined otherwise.
 */
export function answerToMalformed(value: unknown): JSONRPCMessage | undefined {
  const response = responseParts(value);
  return response === undefined ? undefined : madeUpAnswer(response.id, `its answer is malformed: ${response.problem}`);
}

/** The cause of a made-up answer, when `error` is one ("its answer is malformed: …"). */
export function madeUpCause(error: unknown): string | undefined {
  if (!(error instanceof McpError) || typeof error.data !== 'object' || error.data === null) return undefined;
  return madeUp.has(error.data) ? (error.data as { reason: string }).reason : undefined;
}

function madeUpAnswer(id: JsonRpcId, reason: string): JSONRPCMessage {
  const data = { reason };
  madeUp.add(data);
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: reason, data } };
}

/** A response (an object with an id and no method) and what is wrong with it; undefined otherwise. */
function responseParts(value: unknown): { id: JsonRpcId; problem: string } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const message = value as Record<string, unknown>;
  const id = message.id;
  if ('method' in message || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  if ('result' in message) return { id, problem: resultProblem(message.result) };
  if ('error' in message) return { id, problem: 'its error is not a JSON-RPC error object ({ code, message })' };
  return { id, problem: 'it has neither a result nor an error' };
}

function resultProblem(result: unknown): string {
  if (result === null) return 'its result is null, not an object';
  if (Array.isArray(result)) return 'its result is an array, not an object';
  if (typeof result !== 'object') return `its result is a ${typeof result}, not an object`;
  return 'its result is not a valid result object';
}

function clip(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}
