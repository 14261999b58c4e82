import { CATCH_UP, PaceCell } from './pace-cell.js';

/**
 * A token bucket on an injected clock: `level` refills at `ratePerMs` up to `capacity` and may go
 * negative when usage reported after the fact exceeds what was taken (the debt is paid by waiting).
 */
export class TokenBucket {
  private level: number;
  private stamp: number;

  constructor(
    private readonly capacity: number,
    private readonly ratePerMs: number,
    now: number,
  ) {
    this.level = capacity;
    this.stamp = now;
  }

  private refill(now: number): void {
    if (now > this.stamp) this.level = Math.min(this.capacity, this.level + (now - this.stamp) * this.ratePerMs);
    this.stamp = Math.max(this.stamp, now);
  }

  /**
   * Whether `cost` may be taken now. A cost above the capacity is let through once the bucket is
   * full (it could never be otherwise) and leaves the bucket in debt.
   */
  canTake(cost: number, now: number): boolean {
    this.refill(now);
    return this.level >= Math.min(cost, this.capacity);
  }

  take(cost: number, now: number): void {
    this.refill(now);
    this.level -= cost;
  }

  /** A correction after the fact: positive when more was used than taken, negative to give back. */
  adjust(delta: number, now: number): void {
    this.refill(now);
    this.level = Math.min(this.capacity, this.level - delta);
  }

  /** When `cost` can next be taken (now when it already can). */
  readyAt(cost: number, now: number): number {
    this.refill(now);
    const missing = Math.min(cost, this.capacity) - this.level;
    return missing <= 0 ? now : now + Math.ceil(missing / this.ratePerMs);
  }
}

/**
 * How far ahead of its slot a paced request is admitted, as a share of the spacing. A request whose
 * driver takes its own slot (PaceCell) waits at its thread for it: admitted a spacing ahead, one
 * usually waits there when the slot comes, so a driver whose thread was busy loses its place, not
 * the slot. A slot the parent takes must cross to its driver in time: LEAD ahead, so a timer that
 * wakes a little late still grants in time (src/driver/admission.ts). MARGIN spaces requests a
 * little wider.
 */
const CLAIM_LEAD = 1;
const LEAD = 0.3;
const MARGIN = 0.01;
/** A refusal (429/503) slows the pace by this factor: the limit was set too high, or the way is jittery. */
const BACK_OFF = 0.95;
/**
 * The pace backs off at most once per BACK_OFF_EVERY spacings, and only when refusals are frequent:
 * RECURRING of them within RECURRING_WINDOW spacings. Refusals within CLUSTER spacings of each other
 * are one (requests a stall let through together). A provider that enforces no burst refuses now and
 * then when the way to it is jittery (a request delayed on the way, the next one not): those few
 * refusals each pause the schedule for the time they announce, and slowing the whole run for them
 * would cost more than they do. A limit set too high is refused every few requests.
 */
const BACK_OFF_EVERY = 20;
const CLUSTER = 2;
const RECURRING = 3;
const RECURRING_WINDOW = 40;
/** The pace never backs off below this share of the configured limit. */
const BACK_OFF_FLOOR = 0.5;
/**
 * The slower pace holds for this many spacings without a refusal; then it creeps back up by
 * RECOVER_STEP of the configured rate every BACK_OFF_EVERY spacings, so one refusal from a stall
 * does not cost the rest of the run, and a limit set too high settles just under the real one.
 */
const HOLD = 100;
const RECOVER_STEP = 0.01;

/**
 * Requests per minute with no burst, as a schedule of slots one spacing apart (a GCRA virtual clock
 * in a PaceCell). Providers enforce per-second or finer windows, so letting a minute's worth through
 * at once would be refused. A request is admitted ahead of its slot; either the parent takes the slot
 * (`take`: the grant names it) or the request's driver takes it from the shared cell when it is
 * ready to send (`reserve`: the parent counts it until then). Learns from refusals: each one (at most
 * one per BACK_OFF_EVERY spacings) slows the pace by BACK_OFF; the slower pace holds, then creeps back
 * towards the configured one (HOLD).
 */
export class Pacer {
  readonly cell: PaceCell;
  private spacing: number;
  private readonly fastest: number;
  private readonly slowest: number;
  private lastBackOff = Number.NEGATIVE_INFINITY;
  /** The last refusal, and when the cluster of refusals before it began. */
  private lastRefusal = Number.NEGATIVE_INFINITY;
  /** When each of the recent clusters of refusals began (within RECURRING_WINDOW spacings). */
  private clusters: number[] = [];
  private lastStep = Number.NEGATIVE_INFINITY;
  /** The last slot taken and when it was to be sent, until a later one is taken (or it is given back). */
  private last: { slot: number; sendAt: number } | undefined;
  /** Requests admitted to take their own slot (`reserve`), and how many of them are still admitted. */
  private reserved = 0;
  private reservedOpen = 0;

  constructor(requestsPerMinute: number, now: number) {
    this.fastest = (60_000 / requestsPerMinute) * (1 + MARGIN);
    this.spacing = this.fastest;
    this.slowest = this.fastest / BACK_OFF_FLOOR;
    this.cell = PaceCell.create(this.spacing, now);
  }

  /**
   * When the next request may be admitted (now when it already can): ahead of its slot, by more
   * when its driver takes the slot itself (`claims`).
   */
  readyAt(now: number, claims = false): number {
    return Math.max(now, this.nextSlot(now) - this.spacing * (claims ? CLAIM_LEAD : LEAD));
  }

  /**
   * The next free slot: the cell's, after the requests admitted that have not taken theirs yet. When
   * they are late to take them (their threads are busy), the pace of admissions does not wait for
   * them: the next request may be admitted and take the slot first (the cell keeps every send a
   * spacing apart, whoever takes it).
   */
  private nextSlot(now: number): number {
    const pending = this.reserved - this.cell.claims;
    return Math.max(this.cell.nextAt + pending * this.spacing, now - this.spacing * CATCH_UP);
  }

  /** Takes the next slot for a request admitted now: when it should be sent (now, or a little later). */
  take(now: number): number {
    this.recover(now);
    const slot = this.cell.take(now);
    const sendAt = Math.max(slot, now);
    this.last = { slot, sendAt };
    return sendAt;
  }

  /** Admits a request whose driver takes its own slot from the cell: the slot it will likely get. */
  reserve(now: number): number {
    this.recover(now);
    const slot = this.nextSlot(now);
    this.reserved += 1;
    this.reservedOpen += 1;
    return Math.max(slot, now);
  }

  /**
   * A reserved request ended. One that never took its slot (it was cancelled first) is no longer
   * counted ahead of the next: every reserved request not yet taken is still admitted.
   */
  released(): void {
    this.reservedOpen = Math.max(0, this.reservedOpen - 1);
    const pending = this.reserved - this.cell.claims;
    if (pending > this.reservedOpen) this.reserved -= pending - this.reservedOpen;
  }

  /**
   * A request admitted for `sendAt` was never sent (its grant reached its thread too late). When no
   * later slot was taken since, the schedule goes back to that slot: the provider saw nothing there,
   * and the next request may have it (from now, as far as it is past) instead of the slot after.
   */
  giveBack(sendAt: number): void {
    if (this.last?.sendAt !== sendAt) return;
    this.cell.giveBack(this.last.slot);
    this.last = undefined;
  }

  /** The provider said "retry after": nothing is sent before `until`. */
  holdUntil(until: number): void {
    this.cell.holdUntil(until);
  }

  /** The provider refused a request: when refusals are frequent, requests go further apart from now on. */
  backOff(now: number): void {
    const sameCluster = now - this.lastRefusal < this.spacing * CLUSTER;
    this.lastRefusal = now;
    if (sameCluster) return;
    this.clusters = this.clusters.filter((start) => now - start < this.spacing * RECURRING_WINDOW);
    this.clusters.push(now);
    if (this.clusters.length < RECURRING || now - this.lastBackOff < this.spacing * BACK_OFF_EVERY) return;
    this.lastBackOff = now;
    this.setSpacing(Math.min(this.slowest, this.spacing / BACK_OFF));
  }

  /** HOLD spacings after the last refusal, one RECOVER_STEP back towards the configured rate per BACK_OFF_EVERY. */
  private recover(now: number): void {
    if (this.spacing === this.fastest || now - this.lastBackOff < this.spacing * HOLD) return;
    if (now - this.lastStep < this.spacing * BACK_OFF_EVERY) return;
    this.lastStep = now;
    const rate = 1 / this.spacing + RECOVER_STEP / this.fastest;
    this.setSpacing(Math.max(this.fastest, 1 / rate));
  }

  private setSpacing(spacing: number): void {
    this.spacing = spacing;
    this.cell.spacingMs = spacing;
  }

  /** Requests per minute now (the configured rate, less the margin and any back-off). */
  get requestsPerMinute(): number {
    return 60_000 / this.spacing;
  }
}

/** Tokens per minute, with up to one second's worth at once. */
export function tokenBucket(tokensPerMinute: number, now: number): TokenBucket {
  return new TokenBucket(Math.max(1, tokensPerMinute / 60), tokensPerMinute / 60_000, now);
}
