/**
 * Appends one agent's events to its session store: assigns contiguous `seq` numbers synchronously (so
 * call order is log order), chains the store writes, and remembers the first store failure so later
 * flushes report it instead of silently losing events.
 */
import type { SessionEvent, SessionStore, Usage } from '../types.js';
import type { ForeignEvent, NewSessionEvent } from './event-types.js';

/** What the log line does not carry but the host event does (turn-end's rolled-up usage). */
export interface LogMeta {
  usage?: Usage;
}

/** Sees every stamped batch synchronously, in log order (the host event stream derives from it). */
export type LogObserver = (stamped: SessionEvent[], meta: LogMeta | undefined) => void;

export class SessionWriter {
  observe: LogObserver | undefined;
  /** The latest store write handed out (settles after every earlier one). */
  private tail: Promise<void> = Promise.resolve();
  /** The write that will carry `queued` events; undefined once it has taken them. */
  private next: Promise<void> | undefined;
  private queued: SessionEvent[] = [];
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

  /**
   * Stamps now; the store gets the events in order, in as few writes as possible: everything appended
   * while a write is in flight leaves together in the next one (a fan-out appends many small batches
   * per child, and a promise chain link per append was a large share of the parent's allocation).
   * The returned promise settles when the write carrying these events has.
   */
  private stamp(events: readonly ForeignEvent[], meta: LogMeta | undefined): Promise<void> {
    if (events.length === 0) return this.next ?? this.tail;
    const stamped: SessionEvent[] = events.map((event) => ({
      seq: this.nextSeq++,
      time: this.now(),
      type: event.type,
      data: event.data,
    }));
    this.observe?.(stamped, meta);
    for (const event of stamped) this.queued.push(event);
    if (this.next === undefined) {
      const write = (): Promise<void> => this.write();
      this.next = this.tail.then(write, write);
      this.tail = this.next;
      // The caller may not await; the failure is kept and re-thrown by the next flush.
      this.tail.catch(() => undefined);
    }
    return this.next;
  }

  private async write(): Promise<void> {
    const batch = this.queued;
    this.queued = [];
    this.next = undefined;
    if (this.failure !== undefined) throw this.failure;
    try {
      await this.store.append(this.sessionId, batch);
    } catch (error) {
      this.failure = error;
      throw error;
    }
  }

  /**
   * Settles once every event appended so far is in the store (a completed write, not an fsync);
   * rejects if a write failed. Write before effect: a tool body starts only after this.
   */
  written(): Promise<void> {
    return this.next ?? this.tail;
  }

  /** Durable on return (fileSessions: fsync). */
  async flush(): Promise<void> {
    await this.tail.catch(() => undefined);
    if (this.failure !== undefined) throw this.failure;
    await this.store.flush(this.sessionId);
  }
}
