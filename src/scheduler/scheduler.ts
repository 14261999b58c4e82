/**
 * The runtime's one admission scheduler: the async glue around the pure AdmissionPolicy. What an
 * agent's activation is admitted is held by that activation's TurnLease (turn-lease.ts), opened here
 * and released by its one owner; a timer wakes the queue when only time (a bucket, a pause) holds it.
 */
import { BroodError } from '../errors.js';
import { CallerScope } from './caller.js';
import { AdmissionPolicy, type Ticket, type TicketKind, type TicketRequest } from './policy.js';
import { type LeaseDesk, type SchedulerAgent, TurnLease } from './turn-lease.js';
import type { Limits, SchedulerStats, SchedulerView } from './types.js';

/** What the scheduler tells the runtime's event hub (the runtime adds the agent's place in the tree). */
export interface SchedulerEvents {
  queued(agentId: string, what: TicketKind, provider: string | undefined, position: number): void;
  admitted(agentId: string, what: TicketKind, waitedMs: number): void;
  throttled(agentId: string, provider: string, retryAfterMs: number): void;
}

/** The longest delay a Node.js timer takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Waiter {
  readonly ticket: Ticket;
  /** true: admitted (the policy counts it); false: withdrawn (its agent is gone). */
  readonly resolve: (admitted: boolean) => void;
}

export class Scheduler implements SchedulerView {
  private readonly policy: AdmissionPolicy;
  private readonly waiters = new Map<number, Waiter>();
  /** Tickets whose `queued` event was sent. */
  private readonly announced = new Set<number>();
  /**
   * Credit cells of ended activations, for the next ones: shared memory costs an allocation and a
   * collection each, which a wide fan-out of short-lived children would otherwise pay per child.
   */
  private readonly spareCredits: Int32Array[] = [];
  private readonly callers = new CallerScope();
  private readonly desk: LeaseDesk;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    readonly limits: Limits | undefined,
    private readonly now: () => number,
    private readonly events: SchedulerEvents,
  ) {
    this.policy = new AdmissionPolicy(limits ?? {}, now);
    this.desk = this.leaseDesk();
  }

  /** Agent turns need admission (limits.agents is set). */
  get governsAgents(): boolean {
    return this.policy.governs('agent');
  }

  /** Model requests of this provider need admission (a model-request or provider limit is set). */
  governsModels(provider: string): boolean {
    return this.policy.governs('model-request', provider);
  }

  /** True when any model request at all may need admission (drivers then ask before each request). */
  get governsAnyModel(): boolean {
    return this.limits?.modelRequests !== undefined || Object.keys(this.limits?.providers ?? {}).length > 0;
  }

  /** A paced provider's shared schedule: drivers in this process take their own slots from it. */
  paceCell(provider: string): SharedArrayBuffer | undefined {
    return this.governsModels(provider) ? this.policy.paceCell(provider) : undefined;
  }

  /**
   * A new turn would queue past `queue.max`: its run is refused QUEUE_FULL before it is accepted —
   * unless it runs on `lease`, the agent's open one, which holds its slot already.
   */
  refusesTurn(lease?: TurnLease): boolean {
    return this.governsAgents && this.policy.full && lease?.holds !== true;
  }

  queueFullError(): BroodError {
    return new BroodError('QUEUE_FULL', `the admission queue is full (limits.queue.max ${this.policy.maxQueued})`);
  }

  stats(): SchedulerStats {
    return this.policy.stats();
  }

  /** An activation of `agent` starts: what it is admitted is held by this lease until its owner releases it. */
  openLease(agent: SchedulerAgent): TurnLease {
    return new TurnLease(agent, this.desk);
  }

  /**
   * Runs `work`, a tool call made on `lease` in the parent, as that activation's: a top-level run it
   * starts and waits for (waitingOnRun) lends out the caller's slot. Nothing is kept when agents are
   * not governed.
   */
  asCaller<T>(lease: TurnLease | undefined, work: () => T): T {
    return this.governsAgents && lease !== undefined ? this.callers.run(lease, work) : work();
  }

  /**
   * A top-level run of `agentId` was started: when a tool call of another agent started it, that
   * agent waits on it without its slot (TurnLease.lend), so the run can be admitted under any `agents`.
   */
  waitingOnRun<T>(agentId: string, result: Promise<T>): Promise<T> {
    const caller = this.governsAgents ? this.callers.current() : undefined;
    if (caller === undefined || caller.agent.id === agentId) return result;
    return caller.lend(result);
  }

  /** What a TurnLease reaches of this scheduler. */
  private leaseDesk(): LeaseDesk {
    return {
      governsAgents: this.governsAgents,
      governsModels: (provider) => this.governsModels(provider),
      paced: (provider) => this.policy.paced(provider),
      admitNow: (request) => this.policy.admitNow(request),
      enqueue: (request, settle) => this.enqueue(request, settle),
      withdraw: (ticket) => this.withdraw(ticket),
      releaseAgent: () => this.released(() => this.policy.releaseAgent()),
      releaseModel: (lease, usedTokens) => this.released(() => this.policy.releaseModel(lease, usedTokens)),
      releaseUnsent: (lease) => this.released(() => this.policy.releaseUnsent(lease)),
      throttle: (agentId, provider, retryAfterMs) => {
        this.policy.pause(provider, retryAfterMs);
        this.events.throttled(agentId, provider, retryAfterMs);
      },
      creditCell: () => this.spareCredits.pop() ?? new Int32Array(new SharedArrayBuffer(4)),
      spareCreditCell: (cell) => this.spareCredits.push(cell),
    };
  }

  /** Something held was freed: what waits for it may now be admitted. */
  private released(release: () => void): void {
    release();
    this.pumpNow();
  }

  /** Queues a request whose `settle` is called with its admission or withdrawal (QUEUE_FULL past queue.max). */
  private enqueue(request: TicketRequest, settle: (ticket: Ticket, admitted: boolean) => void): Ticket {
    if (this.policy.full) throw this.queueFullError();
    const { ticket, position } = this.policy.enqueue(request);
    this.waiters.set(ticket.id, { ticket, resolve: (admitted) => settle(ticket, admitted) });
    const admittedAtOnce = this.pumpNow().includes(ticket.id);
    if (admittedAtOnce) return ticket;
    this.announced.add(ticket.id);
    this.events.queued(request.agentId, request.kind, request.provider, position);
    return ticket;
  }

  /** A queued ticket whose lease was released: it is never admitted. */
  private withdraw(ticket: Ticket): void {
    const waiter = this.waiters.get(ticket.id);
    if (waiter === undefined) return;
    this.policy.withdraw(ticket);
    this.waiters.delete(ticket.id);
    this.announced.delete(ticket.id);
    waiter.resolve(false);
  }

  /** Admits what fits, resolves those waiters, and arms the timer for what waits on time. */
  private pumpNow(): number[] {
    if (this.policy.queued === 0) return []; // a release far from every limit: nothing waits
    const { admitted, wakeAt } = this.policy.admit();
    const ids: number[] = [];
    const now = this.now();
    for (const ticket of admitted) {
      const waiter = this.waiters.get(ticket.id);
      if (waiter === undefined) continue;
      this.waiters.delete(ticket.id);
      ids.push(ticket.id);
      // Only what was announced as queued is announced as admitted.
      if (this.announced.delete(ticket.id)) this.events.admitted(ticket.agentId, ticket.kind, now - ticket.enqueuedAt);
      waiter.resolve(true);
    }
    this.arm(wakeAt);
    return ids;
  }

  private arm(wakeAt: number | undefined): void {
    if (wakeAt === undefined || wakeAt >= this.timerAt) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = wakeAt;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.pumpNow();
      },
      // A longer delay would make Node fire at once (and warn), every millisecond: woken early, it re-arms.
      Math.min(MAX_TIMER_MS, Math.max(0, wakeAt - this.now())),
    );
  }

  /** The runtime closed: nothing waits any more (their agents are being disposed). */
  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.waiters.values()) {
      this.policy.withdraw(waiter.ticket);
      waiter.resolve(false);
    }
    this.waiters.clear();
  }
}
