/** Errors and `{ signal }` checks shared by the agent's public calls. */
import { BroodError } from '../errors.js';

export function disposedError(id: string): BroodError {
  return new BroodError('DISPOSED', `agent ${id} is disposed`);
}

export function abortedBefore(what: string): BroodError {
  return new BroodError('ABORTED', `aborted before ${what}`);
}

/** `{ signal }` options are checked at the call (a non-signal would otherwise fail much later). */
export function signalOf(opts: { signal?: AbortSignal } | undefined): AbortSignal | undefined {
  const signal = opts?.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new BroodError('INVALID_ARGS', 'signal must be an AbortSignal');
  return signal;
}
