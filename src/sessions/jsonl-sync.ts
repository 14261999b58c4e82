/**
 * Group commit for fileSessions' fsyncs. A caller whose write has completed asks for the session to be
 * made durable; the fsync is queued on the session behind the operations already queued there, and
 * everyone who asks before it starts shares it: N concurrent writes to one session cost one or two
 * fsyncs, not N. An fsync is per file, so sessions that flush together fsync in parallel, one each.
 */
import type { SessionEvent } from '../types.js';

export type SyncMode = 'turn' | 'step';

/**
 * Under `sync: 'step'`, the events after which a write is durable before `append` resolves: a model
 * answer (before its calls are dispatched) and a `tool/call` (before the tool's body starts). The
 * store cannot see a tool's `idempotent` flag, so idempotent calls are synced as well.
 */
const STEP_EVENTS: ReadonlySet<string> = new Set(['assistant/message', 'tool/call']);

export function needsStepSync(events: readonly SessionEvent[]): boolean {
  return events.some((event) => STEP_EVENTS.has(event.type));
}

interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Runs `task` on the session's queue, after every operation queued on it so far. */
export type OnSessionQueue = (id: string, task: () => Promise<void>) => Promise<void>;

export class GroupCommit {
  /** Per session: the fsync that is queued but has not started, shared by everyone who asks for it. */
  private readonly waiting = new Map<string, Waiter>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly enqueue: OnSessionQueue,
    private readonly syncOne: (id: string) => Promise<void>,
  ) {}

  /** Settles once an fsync of `id` that started after this call has finished (rejects if it failed). */
  durable(id: string): Promise<void> {
    const queued = this.waiting.get(id);
    if (queued !== undefined) return queued.promise;
    const waiter = deferred();
    this.waiting.set(id, waiter);
    const done = this.enqueue(id, () => {
      // From here on a new request needs a new fsync: its write may land after this one started.
      this.waiting.delete(id);
      return this.syncOne(id);
    }).then(waiter.resolve, waiter.reject);
    this.inFlight.add(done);
    void done.then(() => this.inFlight.delete(done));
    return waiter.promise;
  }

  /** Settles once every fsync requested so far has finished. */
  async idle(): Promise<void> {
    await Promise.all(this.inFlight);
  }
}

function deferred(): Waiter {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A waiter nobody awaits (its append's caller moved on) must not surface as an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
