/**
 * A failed model call as plain data. An AI SDK `APICallError` (name `AI_APICallError`) carries the
 * HTTP status, the response headers (lower-case names) and whether it may succeed when asked again;
 * an Error copied across a thread boundary keeps only its message, so the proxied shape sends this.
 */
export interface CallFailure {
  name: string;
  message: string;
  statusCode?: number;
  responseHeaders?: Record<string, string>;
  isRetryable?: boolean;
}

export function callFailureOf(error: unknown): CallFailure {
  if (typeof error !== 'object' || error === null) return { name: 'Error', message: String(error) };
  const raw = error as Record<string, unknown>;
  const failure: CallFailure = {
    name: typeof raw.name === 'string' ? raw.name : 'Error',
    message: typeof raw.message === 'string' ? raw.message : String(error),
  };
  if (typeof raw.statusCode === 'number') failure.statusCode = raw.statusCode;
  if (typeof raw.isRetryable === 'boolean') failure.isRetryable = raw.isRetryable;
  const headers = stringRecord(raw.responseHeaders);
  if (headers !== undefined) failure.responseHeaders = headers;
  return failure;
}

/** An abort, whoever raised it (DOM AbortError, the AI SDK's own wrapping of one). */
export function isAbortFailure(failure: CallFailure): boolean {
  return failure.name === 'AbortError' || failure.name === 'TimeoutError';
}

/** "Too many requests" and "overloaded": the provider's own pacing, obeyed for every agent when governed. */
export function isThrottle(failure: CallFailure): boolean {
  return failure.statusCode === 429 || failure.statusCode === 503;
}

/** The provider's word when it gave one, else the status: 408/429/5xx may succeed when asked again. */
export function isRetryable(failure: CallFailure): boolean {
  if (failure.isRetryable !== undefined) return failure.isRetryable;
  const status = failure.statusCode;
  return status !== undefined && (status === 408 || status === 429 || status >= 500);
}

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date; undefined when absent or invalid. */
export function retryAfterMsOf(failure: CallFailure): number | undefined {
  const headers = failure.responseHeaders;
  if (headers === undefined) return undefined;
  const precise = Number(headers['retry-after-ms'] ?? Number.NaN);
  if (Number.isFinite(precise) && precise >= 0) return precise;
  const header = headers['retry-after']?.trim();
  if (header === undefined || header === '') return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.max(ms, 0) : undefined;
}

/** What a turn's diagnostic says: the error's kind, the status when there was one, the provider's message. */
export function describeFailure(failure: CallFailure): string {
  const status = failure.statusCode === undefined ? '' : ` (HTTP ${failure.statusCode})`;
  return `${failure.name}${status}: ${failure.message}`;
}

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) if (typeof item === 'string') out[key.toLowerCase()] = item;
  return out;
}
