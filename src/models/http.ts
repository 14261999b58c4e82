/**
 * HTTP plumbing both wire adapters share: one POST with retries, error text extraction and
 * content-type dispatch. Nothing here knows a protocol's body shape.
 */
import { errorMessage } from '../errors.js';
import type { Cancellation } from '../util/lazy-abort.js';
import { abortedError, sleep } from './abort.js';
import { type HttpPost, type HttpResponse, post } from './http-transport.js';
import type { ResolvedRetry } from './request-options.js';

/** `status`: the HTTP status of a final refusal (absent for network errors). */
export type HttpOutcome = { ok: true; response: HttpResponse } | { ok: false; diagnostic: string; status?: number };

/** One POST (each attempt is sent as it is; `onWrite` is ModelRequest.onWrite) and how to retry it. */
export interface HttpCall extends HttpPost {
  retry: ResolvedRetry;
  /** ModelRequest.retryGate: governed requests wait for the parent's admission instead of sleeping. */
  retryGate?: (retryAfterMs: number | undefined) => Promise<void>;
  /** ModelRequest.atSlot: awaited right before each attempt is sent. */
  atSlot?: () => Promise<void>;
}

/**
 * A governed request told to slow down asks for admission again without spending a retry: the
 * scheduler, not the count, paces it (the pause holds every agent). Bounded, so a server that never
 * lets up still fails the request.
 */
const GOVERNED_THROTTLES = 20;

/** 408/429/5xx may succeed when asked again; every other status is the server's final word. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** "Too many requests" and "overloaded": the provider's own pacing, which a governed request obeys for every agent. */
function isThrottle(status: number): boolean {
  return status === 429 || status === 503;
}

/**
 * Retries only what carried no completion: a refused/failed connection or a retryable status before
 * any body was read. Once a 2xx arrives it is returned as is, so a stream that breaks half-way is never
 * re-requested (its deltas may already have been shown, and a second request would be a second turn).
 */
export async function postWithRetries(call: HttpCall): Promise<HttpOutcome> {
  const { retry, signal } = call;
  let throttles = 0;
  for (let attempt = 0; ; attempt++) {
    const tries = attempt > 0 ? ` (after ${attempt + 1} attempts)` : '';
    let response: HttpResponse;
    if (call.atSlot) {
      await call.atSlot();
      if (signal.aborted) throw abortedError();
    }
    try {
      response = await post(call);
    } catch (error) {
      if (signal.aborted) throw abortedError();
      if (attempt < retry.retries) {
        await sleep(backoffMs(retry, attempt), signal);
        continue;
      }
      return { ok: false, diagnostic: `network error: ${describeCause(error)}${tries}` };
    }
    if (response.ok) return { ok: true, response };
    const asked = retryAfterMs(response);
    const gate = isThrottle(response.status) && throttles < GOVERNED_THROTTLES ? call.retryGate : undefined;
    const retrying = gate !== undefined || (isRetryableStatus(response.status) && attempt < retry.retries);
    // Too long a wait is not waited for, governed or not: a governed one would pause every agent.
    if (retrying && asked !== undefined && asked > retry.maxRetryAfterMs)
      return { ok: false, diagnostic: `${await statusDiagnostic(response, signal)}${tries}; ${tooLong(asked, retry)}` };
    if (gate !== undefined) {
      throttles += 1;
      attempt -= 1; // not a retry of a failure: the same attempt, admitted again
      response.discard();
      await gate(asked);
      if (signal.aborted) throw abortedError();
      continue;
    }
    if (retrying) {
      response.discard();
      await sleep(asked ?? backoffMs(retry, attempt), signal);
      continue;
    }
    return { ok: false, diagnostic: `${await statusDiagnostic(response, signal)}${tries}`, status: response.status };
  }
}

function tooLong(askedMs: number, retry: ResolvedRetry): string {
  return `the server asked to retry after ${Math.ceil(askedMs / 1000)} s, more than maxRetryAfterMs (${retry.maxRetryAfterMs} ms)`;
}

/** Exponential from baseDelayMs, capped at maxDelayMs, minus up to 20% jitter so clients spread out. */
function backoffMs(retry: ResolvedRetry, attempt: number): number {
  const exponential = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);
  return exponential * (1 - Math.random() * 0.2);
}

/** `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date; undefined when absent/invalid. */
export function retryAfterMs(response: HttpResponse): number | undefined {
  const precise = Number(response.header('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(precise) && precise >= 0) return precise;
  const header = response.header('retry-after')?.trim();
  if (header === undefined || header === '') return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.max(ms, 0) : undefined;
}

export async function statusDiagnostic(response: HttpResponse, signal: Cancellation): Promise<string> {
  const status = `HTTP ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`;
  let text: string;
  try {
    text = await response.text();
  } catch {
    if (signal.aborted) throw abortedError();
    return status;
  }
  const message = serverMessage(text);
  return message === undefined ? status : `${status}: ${message}`;
}

/**
 * The server's most useful sentence: `error.message` (OpenAI and Anthropic), else a top-level
 * `message` (e.g. `{ "error": "Not Found", "message": "Cannot POST /v1/chat/completions" }`), else
 * `error` as a string; a short non-HTML plain body verbatim. undefined: the status text must do.
 */
export function serverMessage(text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const trimmed = text.trim();
    return trimmed === '' || trimmed.startsWith('<') ? undefined : trimmed.slice(0, 200);
  }
  if (typeof json !== 'object' || json === null) return undefined;
  const { error, message } = json as { error?: unknown; message?: unknown };
  const nested = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  if (typeof nested === 'string' && nested !== '') return nested;
  if (typeof message === 'string' && message !== '') return message;
  if (typeof error === 'string' && error !== '') return error;
  return undefined;
}

export function describeCause(error: unknown): string {
  // Some clients (undici's fetch) report a generic error with the useful part (ECONNREFUSED, ...) in `cause`.
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause === undefined) return errorMessage(error);
  const code = (cause as { code?: unknown }).code;
  return `${errorMessage(error)} (${typeof code === 'string' ? `${code}: ` : ''}${errorMessage(cause)})`;
}

export type BodyKind = 'sse' | 'json';

/**
 * How to read a 2xx body: by its content-type, whatever was requested (a JSON answer to a streaming
 * request is a valid completion). No content-type: what was requested. Anything else: a diagnostic.
 */
export async function bodyKind(
  response: HttpResponse,
  requested: BodyKind,
  signal: Cancellation,
): Promise<BodyKind | { diagnostic: string }> {
  const type = response.header('content-type')?.toLowerCase() ?? '';
  if (type === '') return requested;
  if (type.includes('text/event-stream')) return 'sse';
  if (/\bjson\b|\+json/.test(type)) return 'json';
  let snippet = '';
  try {
    snippet = (await response.text()).trim().slice(0, 120);
  } catch {
    if (signal.aborted) throw abortedError();
  }
  const tail = snippet === '' ? '' : `: ${JSON.stringify(snippet)}`;
  return {
    diagnostic: `unexpected content-type '${type}' (HTTP ${response.status}); expected JSON or an event stream${tail}`,
  };
}

/** Reads a JSON body; a diagnostic when it is not JSON or the connection drops. */
export async function readJson(
  response: HttpResponse,
  signal: Cancellation,
): Promise<{ ok: true; json: unknown } | { ok: false; diagnostic: string }> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw abortedError();
    return { ok: false, diagnostic: `response failed: ${describeCause(error)}` };
  }
  try {
    return { ok: true, json: JSON.parse(text) };
  } catch {
    return { ok: false, diagnostic: `malformed response: invalid JSON body ${JSON.stringify(text.slice(0, 80))}` };
  }
}

/** The API key for a request: inline, else the named variable of the worker's own environment, read now. */
export function apiKeyOf(options: { apiKey?: string; apiKeyEnv?: string }): string | undefined {
  const key = options.apiKey ?? (options.apiKeyEnv === undefined ? undefined : process.env[options.apiKeyEnv]);
  return key === undefined || key === '' ? undefined : key;
}
