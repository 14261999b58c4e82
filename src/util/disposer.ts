/** An idempotent cleanup function that also works with `using` (SPEC §3). */
export type Disposer = (() => void) & Disposable;

export function makeDisposer(cleanup: () => void): Disposer {
  let done = false;
  const dispose = (() => {
    if (done) return;
    done = true;
    cleanup();
  }) as Disposer;
  (dispose as unknown as Record<symbol, unknown>)[Symbol.dispose] = dispose;
  return dispose;
}

/** Collects disposers so a multi-step setup can be rolled back (in reverse) in one call. */
export class DisposerStack {
  private readonly items: (() => void)[] = [];

  add(dispose: () => void): void {
    this.items.push(dispose);
  }

  disposeAll(): void {
    while (this.items.length > 0) {
      const dispose = this.items.pop();
      try {
        dispose?.();
      } catch {
        // Rollback must continue past a failing step; the original failure is what the caller reports.
      }
    }
  }
}
