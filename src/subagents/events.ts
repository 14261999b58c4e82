/** A tiny event hub whose listener errors are contained: an observer can never break a delegation. */
import { type Disposer, makeDisposer } from '../util/disposer.js';

export class ContainedEvents<Name extends string> {
  private readonly listeners = new Map<Name, Set<(info: unknown) => void>>();

  on(event: Name, fn: (info: unknown) => void): Disposer {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    const listener = (info: unknown): void => fn(info);
    set.add(listener);
    return makeDisposer(() => set.delete(listener));
  }

  emit(event: Name, info: unknown): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        listener(info);
      } catch {
        // Contained by contract (SPEC §9): listener failures never reach the runtime.
      }
    }
  }
}
