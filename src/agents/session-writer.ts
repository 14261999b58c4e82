/**
 * Appends one agent's events to its session store: assigns contiguous `seq` numbers synchronously (so
 * call order is log order), chains the store writes, and remembers the first store failure so later
 * flushes report it instead of silently losing events.
 */
import type { LogMeta } from '../events/from-log.js';
import type { ForeignEvent, NewSessionEvent } from '../sessions/event-types.js';
import type { SessionEvent, SessionStore } from '../types.js';

/** Sees every stamped batch synchronously, in log order (the host event stream derives from it). */
export type LogObserver = (stamped: SessionEvent[], meta: LogMeta | undefined) => void;

export class SessionWriter {
  observe: LogObserver | undefined;
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly store: SessionStore,
    readonly sessionId: string,
    private nextSeq: number,
    private readonly now: () => number = Date.now,
  ) {}

  get seq(): number {
    return this.nextSeq;
  }

  append(events: readonly NewSessionEvent[], meta?: LogMeta): Promise<void> {
    return this.stamp(events, meta);
  }

  /** Events whose types brood may not know (a provider's seed): logged as they are. */
  appendForeign(events: readonly ForeignEvent[]): Promise<void> {
    return this.stamp(events, undefined);
  }

  private stamp(events: readonly ForeignEvent[], meta: LogMeta | undefined): Promise<void> {
    if (events.length === 0) return this.chain;
    const stamped: SessionEvent[] = events.map((event) => ({
      seq: this.nextSeq++,
      time: this.now(),
      type: event.type,
      data: event.data,
    }));
    this.observe?.(stamped, meta);
    this.chain = this.chain.then(async () => {
      if (this.failure !== undefined) throw this.failure;
      try {
        await this.store.append(this.sessionId, stamped);
      } catch (error) {
        this.failure = error;
        throw error;
      }
    });
    // The caller may not await; the failure is kept and re-thrown by the next flush.
    this.chain.catch(() => undefined);
    return this.chain;
  }

  /** Durable on return (fileSessions: fsync). */
  async flush(): Promise<void> {
    await this.chain;
    if (this.failure !== undefined) throw this.failure;
    await this.store.flush(this.sessionId);
  }
}
