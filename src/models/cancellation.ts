/**
 * How a model request carries its turn's cancellation. The driver hands adapters a request whose
 * `signal` is made on first read (see util/lazy-abort.ts); brood's own adapters read the cancellation
 * itself instead, so a request to them makes no AbortSignal at all.
 */
import type { Cancellation, LazyAbortController } from '../util/lazy-abort.js';
import type { ModelRequest } from './types.js';

/** Not enumerable: a copy of the request (`{ ...request }`) carries only its signal, which is the one to honour. */
const CANCELLATION = Symbol('brood.cancellation');

interface Carrier {
  [CANCELLATION]?: LazyAbortController;
}

function lazySignal(this: Carrier): AbortSignal | undefined {
  return this[CANCELLATION]?.signal;
}

const SIGNAL: PropertyDescriptor = { get: lazySignal, enumerable: true, configurable: true };

/** Gives `options` a `signal` made on first read, and the cancellation brood's adapters read. */
export function withCancellation<T extends object>(
  options: T,
  cancel: LazyAbortController,
): T & { signal: AbortSignal } {
  Object.defineProperty(options, CANCELLATION, { value: cancel });
  Object.defineProperty(options, 'signal', SIGNAL);
  return options as T & { signal: AbortSignal };
}

/** The request's cancellation: the driver's when the request is the driver's own object, else its signal. */
export function cancellationOf(request: ModelRequest): Cancellation {
  return (request as Carrier)[CANCELLATION] ?? request.signal;
}
