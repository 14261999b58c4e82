/**
 * A cancellation whose AbortSignal is made only when something reads `signal`.
 *
 * Node 20's AbortSignal gets a hidden class of its own: each one costs ~770 B of heap (its map and
 * descriptor array among it) and the inline caches that read signals go megamorphic. A wide fan-out
 * holds a turn's cancellation per running child on each side of the thread boundary, and brood's own
 * code only needs to know whether it fired and to be told when it does; a custom adapter or tool that
 * reads `signal` still gets a real AbortSignal, aborted with the same reason.
 */

import { setMaxListeners } from 'node:events';

/** What brood's own code reads of a cancellation; an AbortSignal is one too. */
export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class LazyAbortController implements Cancellation {
  aborted = false;
  reason: unknown = undefined;
  /**
   * One listener as itself (a turn's model request adds one at a time), more in a set: N sibling
   * calls adding one each stays O(N), where EventTarget's list is O(N²).
   */
  private listeners: (() => void) | Set<() => void> | undefined = undefined;
  private controller: AbortController | undefined = undefined;

  /**
   * A real AbortSignal, made on first read; aborted already when the cancellation was. Without a
   * listener limit: every call of a turn (hundreds of sibling delegations) may listen to it.
   */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      setMaxListeners(0, this.controller.signal);
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Fires once: the signal (if one was made), then the listeners in the order they were added. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    this.controller?.abort(reason);
    if (typeof listeners === 'function') runListener(listeners);
    else if (listeners !== undefined) for (const listener of listeners) runListener(listener);
  }

  /** Like EventTarget: a listener added after the abort never runs, and one added twice runs once. */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    const listeners = this.listeners;
    if (this.aborted || listeners === listener) return;
    if (listeners === undefined) this.listeners = listener;
    else if (typeof listeners === 'function') this.listeners = new Set([listeners, listener]);
    else listeners.add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (listeners === listener) this.listeners = undefined;
    else if (typeof listeners === 'object') listeners.delete(listener);
  }
}

/** A listener that throws does not stop the others; its error is thrown on its own, as EventTarget does. */
function runListener(listener: () => void): void {
  try {
    listener();
  } catch (error) {
    process.nextTick(() => {
      throw error;
    });
  }
}
