/**
 * How an MCP client failure is classified and described (timeouts, HTTP status, malformed results).
 * Never by JSON-RPC error code alone: the SDK's own "connection closed" and "timed out" errors use
 * −32000 and −32001, which a server may send in an error reply of its own. A timeout is brood's
 * deadline firing; a lost connection is the transport closing (connection.ts).
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { BroodError, errorMessage } from '../errors.js';
import { madeUpCause } from './stdio-lines.js';

/** brood's deadline for one request passed without an answer. */
export class McpDeadline extends Error {
  override readonly name = 'McpDeadline';
}

export function isTimeout(error: unknown): error is McpDeadline {
  return error instanceof McpDeadline;
}

/** The SDK's own timer is set out of the way (its maximum): brood's deadline always fires first. */
const SDK_TIMEOUT_MS = 2_147_483_647;

/**
 * Runs one SDK request under brood's deadline. It cancels the request through the signal (the SDK
 * then sends notifications/cancelled) and rejects McpDeadline; `signal` aborting still rejects as the
 * SDK does, so the caller can tell an abort from a timeout.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  request: (options: { signal: AbortSignal; timeout: number }) => Promise<T>,
): Promise<T> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new McpDeadline(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    const combined = signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]);
    return await request({ signal: combined, timeout: SDK_TIMEOUT_MS });
  } catch (error) {
    if (deadline.signal.aborted && signal?.aborted !== true) throw deadline.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

export function isSessionExpired(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

export function isClientErrorStatus(error: unknown): boolean {
  return (
    error instanceof StreamableHTTPError &&
    typeof error.code === 'number' &&
    error.code >= 400 &&
    error.code < 500 &&
    error.code !== 401
  );
}

/** fetch() rejects with a TypeError when nothing answers (connection refused, reset, DNS). */
export function isNetworkFailure(error: unknown): boolean {
  return error instanceof TypeError || (error instanceof Error && error.name === 'SseError');
}

/**
 * A call's failure that is neither a timeout, an abort nor a lost connection: MCP_ERROR with a
 * one-line cause — the server's error reply (its code and message), or what is wrong with its answer.
 */
export function callFailure(what: string, error: unknown, details: { server: string; tool: string }): BroodError {
  const unusable = madeUpCause(error);
  if (unusable !== undefined) return new BroodError('MCP_ERROR', `${what}: ${unusable}`, { cause: error, details });
  const issues = schemaIssues(error);
  if (issues !== undefined) {
    const cause = `its result is not a valid tool result: ${describeIssues(issues)}`;
    return new BroodError('MCP_ERROR', `${what}: ${cause}`, { cause: error, details });
  }
  const code =
    error instanceof McpError
      ? error.code
      : error instanceof StreamableHTTPError
        ? `HTTP ${String(error.code)}`
        : undefined;
  return new BroodError('MCP_ERROR', `${what}: ${errorMessage(error)}`, {
    cause: error,
    details: { ...details, ...(code === undefined ? {} : { mcpCode: code }) },
  });
}

interface SchemaIssue {
  path: PropertyKey[];
  message: string;
  errors?: SchemaIssue[][];
}

/** The issues of a zod error (the SDK checks results with zod), if `error` is one. */
function schemaIssues(error: unknown): SchemaIssue[] | undefined {
  if (!(error instanceof Error) || !error.name.includes('ZodError')) return undefined;
  const issues = (error as { issues?: unknown }).issues;
  return Array.isArray(issues) ? (issues as SchemaIssue[]) : undefined;
}

/**
 * A schema failure in one line: where and what the first problem is (inside a union, the problem of
 * the alternative that came closest), and how many more there are — not zod's dump of every branch.
 */
function describeIssues(issues: SchemaIssue[]): string {
  const first = issues[0];
  if (first === undefined) return 'it does not have the expected shape';
  const { path, message } = innermost(first, []);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return `${path.length === 0 ? '(root)' : path.map(String).join('.')}: ${message}${more}`;
}

function innermost(issue: SchemaIssue, prefix: PropertyKey[]): { path: PropertyKey[]; message: string } {
  const path = [...prefix, ...(Array.isArray(issue.path) ? issue.path : [])];
  const branches = issue.errors ?? [];
  const closest = branches.reduce<SchemaIssue[] | undefined>(
    (best, branch) => (branch.length > 0 && (best === undefined || branch.length < best.length) ? branch : best),
    undefined,
  );
  return closest?.[0] === undefined ? { path, message: String(issue.message) } : innermost(closest[0], path);
}

export function describeFailure(error: unknown): string {
  if (error instanceof StreamableHTTPError) return `HTTP ${String(error.code)}: ${error.message}`;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
  return `${errorMessage(error)}${code}`;
}
