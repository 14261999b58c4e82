/**
 * One model request through an AI SDK model, whichever shape holds it: brood always calls `doStream`
 * and the model never retries by itself. A failure before the first stream part (the call's own
 * rejection, an `APICallError`) is retried here as brood's HTTP adapters retry: a governed 429/503
 * goes through the request's retry gate, so the tree-wide scheduler pauses that provider for every
 * agent; otherwise retryable failures back off (honouring `retry-after` up to maxRetryAfterMs).
 * Once parts arrive nothing is re-requested: their deltas may have been shown.
 */
import { abortedError, sleep, throwIfAborted } from '../abort.js';
import { failure } from '../failure.js';
import type { ResolvedRetry } from '../request-options.js';
import type { ModelRequest, ModelResponse } from '../types.js';
import {
  type CallFailure,
  callFailureOf,
  describeFailure,
  isRetryable,
  isThrottle,
  retryAfterMsOf,
} from './call-failure.js';
import type { CallPlan } from './call-options.js';
import { applyPart, newStreamState, responseOf } from './stream-reader.js';

export type StreamPart = { type?: unknown } & Record<string, unknown>;

/** Where a call's stream comes from: the model itself (module shape) or the parent (proxied shape). */
export interface StreamSource {
  /** Starts one call; rejects with its failure (an error, or a CallFailure as plain data). */
  open(options: Record<string, unknown>, signal: AbortSignal): Promise<AsyncIterable<StreamPart>>;
}

/** Admissions asked again after a throttle, per request, at most (as the HTTP adapters' loop). */
const GOVERNED_THROTTLES = 20;

export async function requestThrough(
  source: StreamSource,
  plan: CallPlan,
  request: ModelRequest,
  retry: ResolvedRetry,
): Promise<ModelResponse> {
  const { signal } = request;
  let throttles = 0;
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(signal);
    let parts: AsyncIterable<StreamPart>;
    try {
      parts = await untilAborted(source.open(plan.options, signal), signal);
    } catch (error) {
      if (signal.aborted) throw abortedError();
      const cause = callFailureOf(error);
      const tries = attempt > 0 ? ` (after ${attempt + 1} attempts)` : '';
      if (request.retryGate && isThrottle(cause) && throttles < GOVERNED_THROTTLES) {
        throttles += 1;
        attempt -= 1; // not a retry of a failure: the same attempt, admitted again
        await request.retryGate(retryAfterMsOf(cause));
        continue;
      }
      if (!isRetryable(cause) || attempt >= retry.retries) return failure(`${describeFailure(cause)}${tries}`);
      const wait = waitBeforeRetry(cause, retry, attempt);
      if (typeof wait === 'string') return failure(`${describeFailure(cause)}${tries}; ${wait}`);
      await sleep(wait, signal);
      continue;
    }
    return readParts(parts, plan, request);
  }
}

/** How long to wait before asking again, or why not to (a retry-after longer than maxRetryAfterMs). */
function waitBeforeRetry(cause: CallFailure, retry: ResolvedRetry, attempt: number): number | string {
  const asked = retryAfterMsOf(cause);
  if (asked !== undefined && asked > retry.maxRetryAfterMs)
    return `the server asked to retry after ${Math.ceil(asked / 1000)} s, more than maxRetryAfterMs (${retry.maxRetryAfterMs} ms)`;
  if (asked !== undefined) return asked;
  // Exponential from baseDelayMs, capped at maxDelayMs, minus up to 20% jitter so clients spread out.
  return Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt) * (1 - Math.random() * 0.2);
}

async function readParts(
  parts: AsyncIterable<StreamPart>,
  plan: CallPlan,
  request: ModelRequest,
): Promise<ModelResponse> {
  const { signal } = request;
  const state = newStreamState();
  const iterator = parts[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await untilAborted(iterator.next(), signal);
      if (next.done || !applyPart(state, next.value, request)) break;
    }
  } catch (error) {
    if (signal.aborted) throw abortedError();
    state.error = `model stream error: ${describeFailure(callFailureOf(error))}`;
  } finally {
    // Ends the provider's stream too (a proxied one in the parent), whether read to its end or not.
    void Promise.resolve(iterator.return?.()).catch(() => {});
  }
  return responseOf(state, plan.notes);
}

/**
 * The turn's abort ends the request at once, whether or not the model honours its `abortSignal`
 * (a model that ignores it would otherwise hold the turn until its stream ends).
 */
function untilAborted<T>(work: PromiseLike<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(work)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}
