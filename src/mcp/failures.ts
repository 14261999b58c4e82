/** How an MCP client failure is classified and described (timeouts, closed connections, HTTP status). */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../errors.js';

export function isTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}

export function isConnectionClosed(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
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

export function describeFailure(error: unknown): string {
  if (error instanceof StreamableHTTPError) return `HTTP ${String(error.code)}: ${error.message}`;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
  return `${errorMessage(error)}${code}`;
}
