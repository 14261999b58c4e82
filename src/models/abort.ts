/** Abort helpers shared by adapters: every abort surfaces as BroodError ABORTED (ModelAdapter contract). */
import { BroodError } from '../errors.js';
import type { Cancellation } from '../util/lazy-abort.js';

export function abortedError(): BroodError {
  return new BroodError('ABORTED', 'model request aborted');
}

export function throwIfAborted(signal: Cancellation): void {
  if (signal.aborted) throw abortedError();
}

/** Abortable wait: rejects ABORTED as soon as the signal fires and clears its timer. */
export function sleep(ms: number, signal: Cancellation): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortedError());
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
