/**
 * The admission policy, pure: queues, counters, per-provider buckets and retry-after pauses on an
 * injected clock. It never waits and never sets a timer; the async glue (scheduler.ts) calls `admit`
 * whenever something changed and sleeps until `wakeAt` when work waits on time alone.
 */
import { Pacer, type TokenBucket, tokenBucket } from './buckets.js';
import type { Limits, ProviderLimits, QueueOrder } from './types.js';

export type TicketKind = 'agent' | 'model-request';

export interface TicketRequest {
  kind: TicketKind;
  agentId: string;
  depth: number;
  /** Model requests only: the catalog provider id. */
  provider?: string;
  /** Model requests only: estimated input + output tokens. */
  tokens?: number;
  /** Model requests only: its driver takes its own slot of a paced provider (Pacer.reserve). */
  claimsOwnSlot?: boolean;
}

export interface Ticket extends TicketRequest {
  readonly id: number;
  readonly enqueuedAt: number;
  /** Once admitted, a paced model request's slot: when it should be sent (it may be admitted a little ahead). */
  sendAt?: number;
}

/** What an admitted model request holds until it is released (its usage corrects the estimate). */
export interface ModelLease {
  readonly provider: string;
  readonly tokens: number;
  /** A paced request's slot (Ticket.sendAt). */
  readonly sendAt?: number;
  /** Its driver takes its own slot (TicketRequest.claimsOwnSlot). */
  readonly claimsOwnSlot?: boolean;
}

interface ProviderState {
  readonly limits: ProviderLimits;
  inFlight: number;
  pausedUntil: number;
  readonly requests: Pacer | undefined;
  readonly tokens: TokenBucket | undefined;
}

export interface PolicyStats {
  running: number;
  queued: number;
  inFlight: Record<string, number>;
  throttledMs: number;
}

export class AdmissionPolicy {
  private queue: Ticket[] = [];
  private readonly providers = new Map<string, ProviderState>();
  private nextId = 1;
  private running = 0;
  private inFlightTotal = 0;
  private throttledMs = 0;
  private readonly order: QueueOrder;
  readonly maxQueued: number;

  constructor(
    private readonly limits: Limits,
    private readonly now: () => number,
  ) {
    this.order = limits.queue?.order ?? 'deeper-first';
    this.maxQueued = limits.queue?.max ?? Number.POSITIVE_INFINITY;
  }

  /** Whether requests of this kind (and provider) are governed at all: ungoverned ones never queue. */
  governs(kind: TicketKind, provider?: string): boolean {
    if (kind === 'agent') return this.limits.agents !== undefined;
    return this.limits.modelRequests !== undefined || (provider !== undefined && this.hasProviderLimits(provider));
  }

  private hasProviderLimits(provider: string): boolean {
    return this.limits.providers?.[provider] !== undefined;
  }

  get queued(): number {
    return this.queue.length;
  }

  get full(): boolean {
    return this.queue.length >= this.maxQueued;
  }

  /** Queues a request; its position (1 = next) in admission order. Callers check `full` first. */
  enqueue(request: TicketRequest): { ticket: Ticket; position: number } {
    const ticket: Ticket = { ...request, id: this.nextId++, enqueuedAt: this.now() };
    const index = this.insertionIndex(ticket);
    this.queue.splice(index, 0, ticket);
    return { ticket, position: index + 1 };
  }

  /** Deeper first: behind every ticket at least as deep, ahead of shallower ones; fifo: at the end. */
  private insertionIndex(ticket: Ticket): number {
    if (this.order === 'fifo') return this.queue.length;
    const index = this.queue.findIndex((queued) => queued.depth < ticket.depth);
    return index === -1 ? this.queue.length : index;
  }

  /**
   * Admits a request at once or not at all (nothing is queued): only while nothing waits, for a
   * model request only when its provider is not paced (its slot would matter), and only when it fits
   * now. The way of nearly every request while far from every limit: no ticket, no waiting.
   */
  admitNow(request: TicketRequest): boolean {
    if (this.queue.length > 0) return false;
    if (request.kind === 'model-request') {
      const state = this.provider(request.provider ?? '');
      if (state.requests !== undefined || state.tokens !== undefined) return false;
    }
    const now = this.now();
    if (this.fits(request, now) !== true) return false;
    this.take(request, now);
    return true;
  }

  /** Drops a ticket that will never be admitted (its caller gave up). */
  withdraw(ticket: Ticket): void {
    const index = this.queue.indexOf(ticket);
    if (index !== -1) this.queue.splice(index, 1);
  }

  /**
   * Admits every ticket that fits now, in queue order. A ticket that does not fit blocks later ones
   * of the same kind and provider (their order is kept), never others.
   */
  admit(): { admitted: Ticket[]; wakeAt: number | undefined } {
    const now = this.now();
    const admitted: Ticket[] = [];
    const blocked = new Set<string>();
    let wakeAt: number | undefined;
    // One pass that keeps what stays queued (in order): a pump runs on every release, with hundreds waiting.
    const staying: Ticket[] = [];
    for (const ticket of this.queue) {
      const lane = ticket.kind === 'agent' ? 'agent' : `model:${ticket.provider}`;
      if (blocked.has(lane) || (ticket.kind === 'model-request' && blocked.has('model'))) {
        staying.push(ticket);
        continue;
      }
      const verdict = this.fits(ticket, now);
      if (verdict === true) {
        const sendAt = this.take(ticket, now);
        if (sendAt !== undefined) ticket.sendAt = sendAt;
        admitted.push(ticket);
        continue;
      }
      staying.push(ticket);
      blocked.add(verdict.global ? (ticket.kind === 'agent' ? 'agent' : 'model') : lane);
      if (verdict.at !== undefined) wakeAt = Math.min(wakeAt ?? verdict.at, verdict.at);
    }
    if (admitted.length > 0) this.queue = staying;
    return { admitted, wakeAt };
  }

  private fits(ticket: TicketRequest, now: number): true | { global: boolean; at?: number } {
    if (ticket.kind === 'agent')
      return this.running < (this.limits.agents ?? Number.POSITIVE_INFINITY) || { global: true };
    if (this.inFlightTotal >= (this.limits.modelRequests ?? Number.POSITIVE_INFINITY)) return { global: true };
    const state = this.provider(ticket.provider ?? '');
    if (state.pausedUntil > now) return { global: false, at: state.pausedUntil };
    if (state.inFlight >= (state.limits.concurrent ?? Number.POSITIVE_INFINITY)) return { global: false };
    const at = Math.max(
      state.requests?.readyAt(now, ticket.claimsOwnSlot === true) ?? now,
      state.tokens?.readyAt(ticket.tokens ?? 0, now) ?? now,
    );
    return at <= now ? true : { global: false, at };
  }

  /** Counts an admitted request; a paced one's slot: when it should be sent. */
  private take(ticket: TicketRequest, now: number): number | undefined {
    if (ticket.kind === 'agent') {
      this.running += 1;
      return undefined;
    }
    this.inFlightTotal += 1;
    const state = this.provider(ticket.provider ?? '');
    state.inFlight += 1;
    state.tokens?.take(ticket.tokens ?? 0, now);
    if (state.requests === undefined) return undefined;
    return ticket.claimsOwnSlot === true ? state.requests.reserve(now) : state.requests.take(now);
  }

  /** A provider's state, made on first use (one without limits of its own still counts and pauses). */
  private provider(id: string): ProviderState {
    const existing = this.providers.get(id);
    if (existing) return existing;
    const limits = this.limits.providers?.[id] ?? {};
    const now = this.now();
    const state: ProviderState = {
      limits,
      inFlight: 0,
      pausedUntil: 0,
      requests: limits.requestsPerMinute === undefined ? undefined : new Pacer(limits.requestsPerMinute, now),
      tokens: limits.tokensPerMinute === undefined ? undefined : tokenBucket(limits.tokensPerMinute, now),
    };
    this.providers.set(id, state);
    return state;
  }

  /** An admitted agent turn ended or its agent now waits on children: its slot is free. */
  releaseAgent(): void {
    this.running = Math.max(0, this.running - 1);
  }

  /** An admitted model request ended; `usedTokens` (when the response reported usage) corrects the estimate. */
  releaseModel(lease: ModelLease, usedTokens?: number): void {
    this.inFlightTotal = Math.max(0, this.inFlightTotal - 1);
    const state = this.provider(lease.provider);
    state.inFlight = Math.max(0, state.inFlight - 1);
    if (lease.claimsOwnSlot === true) state.requests?.released();
    if (usedTokens !== undefined) state.tokens?.adjust(usedTokens - lease.tokens, this.now());
  }

  /** An admitted model request was never sent: its slot and its tokens go back (see Pacer.giveBack). */
  releaseUnsent(lease: ModelLease): void {
    this.releaseModel(lease, 0);
    if (lease.sendAt !== undefined) this.provider(lease.provider).requests?.giveBack(lease.sendAt);
  }

  /**
   * A provider refused a request and said "retry after": nothing more of it is admitted until then,
   * for every agent, and its requests are paced slower from now on.
   */
  pause(provider: string, retryAfterMs: number): void {
    const now = this.now();
    const until = now + retryAfterMs;
    const state = this.provider(provider);
    state.requests?.backOff(now);
    state.requests?.holdUntil(until);
    const from = Math.max(state.pausedUntil, now);
    if (until > from) this.throttledMs += until - from;
    state.pausedUntil = Math.max(state.pausedUntil, until);
  }

  /** Whether a provider's requests are paced (requestsPerMinute). */
  paced(provider: string): boolean {
    return this.limits.providers?.[provider]?.requestsPerMinute !== undefined;
  }

  /** A paced provider's shared schedule, for drivers that take their own slots (in this process). */
  paceCell(provider: string): SharedArrayBuffer | undefined {
    return this.provider(provider).requests?.cell.buffer;
  }

  stats(): PolicyStats {
    const inFlight: Record<string, number> = {};
    for (const [id, state] of this.providers) inFlight[id] = state.inFlight;
    return { running: this.running, queued: this.queue.length, inFlight, throttledMs: this.throttledMs };
  }
}
