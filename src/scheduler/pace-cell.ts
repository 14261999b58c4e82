/**
 * A paced provider's schedule in shared memory (requestsPerMinute): the parent's scheduler and the
 * drivers on its threads read and advance one cell, so a driver takes its send time itself, at the
 * moment its request is ready to go, instead of being handed a slot that a busy thread may receive
 * too late. Whichever admitted request is ready first takes the next slot; one whose thread was
 * late loses nothing but its place.
 *
 * A provider's limiter counts a request when it reads it, and a request read late pushes its schedule
 * (GCRA: the next is due a spacing after the later of its slot and its arrival), so this schedule
 * follows actual sends too: a driver records each send (`sent`), one sent late moves the next slot,
 * and a request whose slot was taken before that waits for it (`clearAt`).
 *
 * Where the adapter reports its socket writes (brood's HTTP adapters: `wrote`), a send that passed its
 * slot is not out until it is written: a thread that stalls between the two (a collection, a busy
 * moment) would otherwise have its request read right before the next one, which another thread sent
 * on time. The next send waits for that write (`clearAt`), a few spacings at most.
 *
 * Layout (BigInt64, microseconds on the process's epoch clock, src/clock.ts): the earliest time
 * the next request may be sent, the spacing, how many requests took a slot so far, the latest send
 * that passed its slot, the latest write (the latest send is the later of the two), and whether the
 * adapter reports writes (1) or not (0).
 */
const NEXT = 0;
const SPACING = 1;
const CLAIMS = 2;
const LAST_PASSED = 3;
const LAST_WRITTEN = 4;
const REPORTS_WRITES = 5;
const FIELDS = 6;

/**
 * A request that takes its slot later than the schedule keeps the schedule if it is at most this
 * share of a spacing late; later, the schedule restarts from it (missed slots are never bunched).
 */
export const CATCH_UP = 0.05;

/**
 * How much sooner than a spacing after the previous send a request may still go, and how late after
 * its slot a send may be and move nothing: a timer wakes up to a millisecond late, and a late move
 * costs throughput. The rest of the provider's tolerance for arrival jitter (half a spacing at the
 * bench's server; unknown elsewhere) is kept for the way to it.
 */
export const SEND_SLACK = 0.2;

/**
 * How long after a send passed its slot the next waits for its write, in spacings: a thread's stall
 * between the two is rarely longer, and a send that never writes (its connection failed) holds the
 * next one back no longer than this.
 */
export const WRITE_WAIT = 3;

/** How often a send waiting for an earlier one's write looks again (a timer's least wait). */
const WRITE_POLL_MS = 1;

const toMicros = (ms: number): bigint => BigInt(Math.round(ms * 1000));
const toMs = (micros: bigint): number => Number(micros) / 1000;

/** Raises a time field to `at` unless it is already later (another thread may race this one). */
function raiseTo(cells: BigInt64Array, field: number, at: number): void {
  const atUs = toMicros(at);
  for (;;) {
    const last = Atomics.load(cells, field);
    if (last >= atUs || Atomics.compareExchange(cells, field, last, atUs) === last) return;
  }
}

export class PaceCell {
  private readonly cells: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.cells = new BigInt64Array(buffer);
  }

  static create(spacingMs: number, now: number): PaceCell {
    const cell = new PaceCell(new SharedArrayBuffer(FIELDS * BigInt64Array.BYTES_PER_ELEMENT));
    Atomics.store(cell.cells, NEXT, toMicros(now));
    // Nothing sent or written yet holds anything back.
    for (const field of [LAST_PASSED, LAST_WRITTEN]) Atomics.store(cell.cells, field, toMicros(now - spacingMs));
    cell.spacingMs = spacingMs;
    return cell;
  }

  get spacingMs(): number {
    return toMs(Atomics.load(this.cells, SPACING));
  }

  set spacingMs(ms: number) {
    Atomics.store(this.cells, SPACING, toMicros(ms));
  }

  /** The earliest time the next request may be sent. */
  get nextAt(): number {
    return toMs(Atomics.load(this.cells, NEXT));
  }

  get claims(): number {
    return Number(Atomics.load(this.cells, CLAIMS));
  }

  /**
   * Takes the next slot for a request ready at `now` when it is at most `aheadMs` away (a timer
   * cannot wait less than a millisecond): `{ slot }`, to send then; else `{ retryIn }`, how long to
   * wait before trying again (another request may take this slot meanwhile). `counted`: the slot is
   * the one the parent admitted the request for (PaceCell.claims); a resend's is not.
   */
  tryClaim(now: number, aheadMs: number, counted = true): { slot: number } | { retryIn: number } {
    // Compared in whole microseconds, as the schedule is kept: a caller that waited exactly `retryIn`
    // is not turned away again by a float rounding a hair short of the slot.
    const aheadUs = toMicros(aheadMs);
    for (;;) {
      const next = Atomics.load(this.cells, NEXT);
      const waitUs = next - toMicros(now);
      if (waitUs > aheadUs) return { retryIn: toMs(waitUs - aheadUs) };
      const slot = Math.max(toMs(next), this.restartFrom(now));
      if (this.advance(next, now)) {
        if (counted) Atomics.add(this.cells, CLAIMS, 1n);
        return { slot };
      }
    }
  }

  /**
   * When the request whose slot is `slot` may be sent, asked at `now`: at its slot, unless a send since
   * it was taken went late (then a spacing, less the slack, after that send), or one passed its slot
   * and is not written yet (then again a little later, until it is or WRITE_WAIT has passed).
   */
  clearAt(slot: number, now = slot): number {
    const spacing = this.spacingMs;
    const passed = toMs(Atomics.load(this.cells, LAST_PASSED));
    const written = toMs(Atomics.load(this.cells, LAST_WRITTEN));
    const spaced = Math.max(slot, Math.max(passed, written) + spacing * (1 - SEND_SLACK));
    const reports = Atomics.load(this.cells, REPORTS_WRITES) === 1n;
    const unwritten = reports && passed > written && now < passed + spacing * WRITE_WAIT;
    return unwritten ? Math.max(spaced, now + WRITE_POLL_MS) : spaced;
  }

  /**
   * The request whose slot is `slot` is being sent at `at`: the schedule follows it, as the provider's
   * does — when it is later than its slot by more than the slack, the next slot moves with it.
   */
  sent(slot: number, at: number): void {
    raiseTo(this.cells, LAST_PASSED, at);
    if (at - slot <= this.spacingMs * SEND_SLACK) return;
    this.holdUntil(at + this.spacingMs * (1 - SEND_SLACK));
  }

  /**
   * A request to this provider was written to its socket at `at` (what the provider reads): when that
   * is later than the schedule allows for, the schedule follows it as `sent` does — a connection
   * opened first or a busy thread can delay the write after the slot was taken.
   */
  wrote(at: number): void {
    raiseTo(this.cells, LAST_WRITTEN, at);
    this.expectWrites(); // a write heard: this adapter reports them
    this.holdUntil(at + this.spacingMs * (1 - SEND_SLACK));
  }

  /**
   * This provider's adapter reports its writes (`wrote`): from now on a send that passed its slot is out
   * only once written — the first one too, before any write was heard.
   */
  expectWrites(): void {
    Atomics.store(this.cells, REPORTS_WRITES, 1n);
  }

  /** The parent takes a slot for a request whose driver cannot read this cell: when it should be sent. */
  take(now: number): number {
    for (;;) {
      const next = Atomics.load(this.cells, NEXT);
      const slot = Math.max(toMs(next), this.restartFrom(now));
      if (this.advance(next, now)) return slot;
    }
  }

  /** A slot taken with `take` was never used: when no later one was taken since, the next request has it. */
  giveBack(slot: number): void {
    const from = toMicros(slot);
    Atomics.compareExchange(this.cells, NEXT, from + Atomics.load(this.cells, SPACING), from);
  }

  /** Nothing may be sent before `at` (a provider's retry-after). */
  holdUntil(at: number): void {
    raiseTo(this.cells, NEXT, at);
  }

  private restartFrom(now: number): number {
    return now - this.spacingMs * CATCH_UP;
  }

  /** Moves the schedule one spacing past the slot taken now, unless another side moved it first. */
  private advance(next: bigint, now: number): boolean {
    const slot = Math.max(toMs(next), this.restartFrom(now));
    const after = toMicros(slot) + Atomics.load(this.cells, SPACING);
    return Atomics.compareExchange(this.cells, NEXT, next, after) === next;
  }
}
