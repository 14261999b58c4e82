/**
 * Per-session serialization: every operation on one session runs after the previous one settles,
 * in call order, so concurrent appends land in the file in the order they were called and a read
 * sees every append issued before it. Different sessions proceed in parallel.
 */
const noop = (): void => undefined;

export class SessionSerial {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(id: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(id) ?? Promise.resolve();
    // Tails never reject, so one failed operation does not poison the ones queued after it.
    const result = previous.then(task);
    const tail = result.then(noop, noop);
    this.#tails.set(id, tail);
    // Forget settled chains so a long-lived store does not keep one promise per session ever touched.
    void tail.then(() => {
      if (this.#tails.get(id) === tail) this.#tails.delete(id);
    });
    return result;
  }

  /** Resolves once every operation queued so far (on any session) has settled. */
  async idle(): Promise<void> {
    await Promise.all(this.#tails.values());
  }
}
