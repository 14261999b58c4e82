/**
 * Asynchronous plugins (SPEC §15, e.g. mcpTools): `brood.use()` hands back a promise of the
 * disposer, and the runtime keeps every install it started so `close()` can wait for installs still
 * under way and then dispose what they installed (an MCP server process must not outlive the runtime).
 * Synchronous plugins never pass through here: their behaviour is exactly what it was.
 */
import { BroodError } from '../errors.js';
import type { Disposer } from '../util/disposer.js';

/** A disposer whose cleanup is asynchronous: calling it returns the one cleanup promise (idempotent). */
export type AsyncDisposer = (() => Promise<void>) & Disposable & AsyncDisposable;

export function makeAsyncDisposer(cleanup: () => unknown): AsyncDisposer {
  let done: Promise<void> | undefined;
  const dispose = (() => {
    done ??= Promise.resolve()
      .then(cleanup)
      .then(() => undefined);
    return done;
  }) as AsyncDisposer;
  const target = dispose as unknown as Record<symbol, unknown>;
  target[Symbol.dispose] = () => void dispose();
  target[Symbol.asyncDispose] = dispose;
  return dispose;
}

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

export class AsyncPlugins {
  readonly #pending = new Set<Promise<unknown>>();
  readonly #installed = new Set<AsyncDisposer>();

  /** Wraps an install in flight; `closed()` true when it settles means the runtime closed meanwhile. */
  adopt(name: string, install: PromiseLike<Disposer>, closed: () => boolean): Promise<AsyncDisposer> {
    const adopted = Promise.resolve(install).then((inner) => {
      if (typeof inner !== 'function')
        throw new BroodError('INVALID_CONFIG', `plugin "${name}" did not resolve to a disposer`);
      const disposer = makeAsyncDisposer(() => {
        this.#installed.delete(disposer);
        return inner();
      });
      if (closed()) {
        // The runtime closed while this plugin was installing: undo it now, report the closed runtime.
        return disposer().then(() => {
          throw new BroodError('DISPOSED', 'this brood runtime closed while the plugin was installing');
        });
      }
      this.#installed.add(disposer);
      return disposer;
    });
    const settled = adopted.then(
      () => undefined,
      () => undefined,
    );
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
    return adopted;
  }

  /** Waits for installs still under way, then disposes every asynchronous plugin still installed. */
  async close(): Promise<void> {
    await Promise.all([...this.#pending]);
    await Promise.allSettled([...this.#installed].map((dispose) => dispose()));
  }
}
