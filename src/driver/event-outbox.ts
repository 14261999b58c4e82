/**
 * A driver's outgoing session events. Events are stamped with this thread's clock (spans time the work
 * by it) and batched per microtask into one `log()` crossing; the parent appends them in order. Streamed
 * text waits up to DELTA_BATCH_MS so a burst of adapter chunks shares one message (each chunk stays one
 * delta).
 */
import {
  type DriverEventType,
  type DriverStamp,
  type SessionEventDataMap,
  TEXT_DELTA_EVENT,
} from '../sessions/event-types.js';
import type { DriverEvent } from '../wire/protocol.js';
import { driverTime } from './clock.js';

/** How long streamed deltas may wait to share one message across the thread boundary. */
const DELTA_BATCH_MS = 10;

export class EventOutbox {
  private pending: DriverEvent[] = [];
  private flushScheduled = false;
  private deltaTimer: NodeJS.Timeout | undefined;

  /** The sink is called as `sink.log(batch)` (a driver's gateway): no closure per driver to hold. */
  constructor(private readonly sink: { log(batch: DriverEvent[]): Promise<void> }) {}

  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** Each caller builds `data` fresh, so it is stamped in place. */
  emit<T extends Exclude<DriverEventType, 'text/delta'>>(type: T, data: SessionEventDataMap[T]): void {
    (data as DriverStamp).at = driverTime();
    this.pending.push({ type, data });
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(this.scheduledFlush);
  }

  emitDelta(turn: number, delta: string): void {
    if (typeof delta !== 'string' || delta === '') return;
    this.pending.push({ type: TEXT_DELTA_EVENT, data: { turn, delta } });
    if (this.flushScheduled || this.deltaTimer !== undefined) return;
    this.deltaTimer = setTimeout(this.scheduledFlush, DELTA_BATCH_MS);
  }

  /** Sends what is pending; resolves when the parent has it. */
  async flush(): Promise<void> {
    const batch = this.take();
    if (batch !== undefined) await this.sink.log(batch);
  }

  /**
   * Sends what is pending without waiting: a send that fails is the link's to report, not the turn's.
   * With nothing pending (a driver calls this before every request and tool batch) it makes nothing.
   */
  flushSoon(): void {
    const batch = this.take();
    if (batch !== undefined) this.sink.log(batch).catch(ignore);
  }

  /** One function per outbox for its microtask and delta timer, instead of a closure per batch. */
  private readonly scheduledFlush = (): void => this.flushSoon();

  private take(): DriverEvent[] | undefined {
    this.flushScheduled = false;
    if (this.deltaTimer !== undefined) {
      clearTimeout(this.deltaTimer);
      this.deltaTimer = undefined;
    }
    if (this.pending.length === 0) return undefined;
    const batch = this.pending;
    this.pending = [];
    return batch;
  }
}

function ignore(): void {}
