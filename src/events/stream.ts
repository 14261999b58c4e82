/**
 * One subscriber's queue and its async iterator. A slow consumer never blocks the producer and never
 * grows memory without bound: past `buffer` queued events, adjacent text deltas of one agent's turn are
 * coalesced; if that is not enough the oldest event is dropped, and the next read yields one `lagged`
 * event saying how many were lost before the rest.
 */
import type { BroodEvent, LaggedEvent, TextDeltaEvent } from '../types.js';

type Resolve = (result: IteratorResult<BroodEvent>) => void;

/** Compact the backing array once this many read slots accumulate at its front. */
const COMPACT_AFTER = 1024;

export class EventStream implements AsyncIterableIterator<BroodEvent> {
  private queue: BroodEvent[] = [];
  private head = 0;
  /** Index from which the queue may still hold uncoalesced deltas (everything before it is coalesced). */
  private dirtyFrom = 0;
  private dropped = 0;
  private waiting: Resolve | undefined;
  private finished = false;
  private draining = false;

  constructor(
    private readonly buffer: number,
    private readonly laggedAgentId: string,
    private readonly now: () => number,
    private readonly onClose: (stream: EventStream) => void,
  ) {}

  get size(): number {
    return this.queue.length - this.head;
  }

  get closed(): boolean {
    return this.finished || this.draining;
  }

  push(event: BroodEvent): void {
    if (this.closed) return;
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      waiting({ value: event, done: false });
      return;
    }
    if (this.size < this.buffer) {
      this.queue.push(event);
      return;
    }
    if (this.mergeIntoLast(event)) return;
    this.coalesce();
    if (this.size >= this.buffer) this.dropOldest();
    this.queue.push(event);
  }

  /** No more events will come (the agent was disposed, the runtime closed): drain, then finish. */
  end(): void {
    if (this.closed) return;
    this.draining = true;
    this.onClose(this);
    // A reader already waiting gets `done` now; otherwise reads drain the queue first.
    if (this.size === 0 && this.dropped === 0) this.finish();
  }

  next(): Promise<IteratorResult<BroodEvent>> {
    if (this.dropped > 0) return Promise.resolve({ value: this.takeLagged(), done: false });
    if (this.size > 0) return Promise.resolve({ value: this.shift(), done: false });
    if (this.closed) {
      this.finish();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** Called by `break` in for-await, or by the abort signal: unsubscribe and drop what is queued. */
  return(): Promise<IteratorResult<BroodEvent>> {
    this.finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.onClose(this);
    this.queue = [];
    this.head = 0;
    this.dropped = 0;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  private shift(): BroodEvent {
    const event = this.queue[this.head] as BroodEvent;
    this.queue[this.head] = undefined as unknown as BroodEvent;
    this.head += 1;
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.dirtyFrom = Math.max(0, this.dirtyFrom - this.head);
      this.head = 0;
    }
    return event;
  }

  private takeLagged(): LaggedEvent {
    const dropped = this.dropped;
    this.dropped = 0;
    return { type: 'lagged', agentId: this.laggedAgentId, parentId: undefined, depth: 0, time: this.now(), dropped };
  }

  /** O(1) fast path while full: a delta that continues the last queued delta joins it. */
  private mergeIntoLast(event: BroodEvent): boolean {
    if (this.size === 0) return false;
    const last = this.queue[this.queue.length - 1] as BroodEvent;
    const merged = mergedDeltas(last, event);
    if (merged === undefined) return false;
    this.queue[this.queue.length - 1] = merged;
    return true;
  }

  /** Merges runs of adjacent deltas (same agent and turn) in the part of the queue not yet coalesced. */
  private coalesce(): void {
    const start = Math.max(this.head, this.dirtyFrom - 1);
    let write = start;
    for (let read = start + 1; read < this.queue.length; read += 1) {
      const current = this.queue[read] as BroodEvent;
      const merged = mergedDeltas(this.queue[write] as BroodEvent, current);
      if (merged !== undefined) {
        this.queue[write] = merged;
      } else {
        write += 1;
        this.queue[write] = current;
      }
    }
    if (this.queue.length > this.head) this.queue.length = write + 1;
    this.dirtyFrom = this.queue.length;
  }

  private dropOldest(): void {
    this.shift();
    this.dropped += 1;
  }
}

/** One delta for two adjacent deltas of the same agent's turn (a new object: events are shared between subscribers). */
function mergedDeltas(a: BroodEvent, b: BroodEvent): TextDeltaEvent | undefined {
  if (a.type !== 'text-delta' || b.type !== 'text-delta' || a.agentId !== b.agentId || a.turn !== b.turn)
    return undefined;
  return { ...a, delta: a.delta + b.delta };
}
