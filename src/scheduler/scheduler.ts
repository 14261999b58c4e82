/**
 * The runtime's one admission scheduler: the async glue around the pure AdmissionPolicy. Callers
 * await `admitTurn` / `admitModel`; a timer wakes the queue when only time (a bucket, a pause) holds
 * it. Agent slots and model leases are kept by agent id so whatever ends an agent's work (its
 * response logged, its turn or activation over) releases exactly what it held.
 */
import { BroodError } from '../errors.js';
import { CallerScope, type ToolCaller } from './caller.js';
import { AdmissionPolicy, type ModelLease, type Ticket, type TicketKind, type TicketRequest } from './policy.js';
import type { Limits, SchedulerStats, SchedulerView } from './types.js';

/** One model request asking for admission (DriverGateway.admit's argument). */
export interface ModelAdmission {
  provider: string;
  /** Estimated input + output tokens. */
  tokens: number;
  /** The previous attempt was refused with this retry-after. */
  retryAfterMs?: number | undefined;
  /** The previous grant reached its thread too late and was never sent. */
  givenBack?: boolean | undefined;
  /** The driver takes its own slot from the provider's PaceCell (paceCell). */
  claims?: boolean | undefined;
}

export interface SchedulerAgent {
  readonly id: string;
  readonly depth: number;
}

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
  /** Agents holding a turn slot now. */
  private readonly holding = new Set<string>();
  /** What each agent waits on outside its turn (waitOn): while any, it holds no slot. */
  private readonly waits = new Map<string, number>();
  private readonly leases = new Map<string, ModelLease>();
  /** Per agent whose driver reads shared memory: 1 while its next model request is admitted ahead. */
  private readonly credits = new Map<string, { cell: Int32Array; provider: string }>();
  /**
   * Credit cells of ended activations, for the next ones: shared memory costs an allocation and a
   * collection each, which a wide fan-out of short-lived children would otherwise pay per child.
   */
  private readonly spareCredits: Int32Array[] = [];
  private readonly callers = new CallerScope();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    readonly limits: Limits | undefined,
    private readonly now: () => number,
    private readonly events: SchedulerEvents,
  ) {
    this.policy = new AdmissionPolicy(limits ?? {}, now);
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

  /** A turn of this agent would queue past `queue.max`: its run is refused QUEUE_FULL before it is accepted. */
  refusesTurn(agentId: string): boolean {
    return this.governsAgents && this.policy.full && !this.holding.has(agentId);
  }

  queueFullError(): BroodError {
    return new BroodError('QUEUE_FULL', `the admission queue is full (limits.queue.max ${this.policy.maxQueued})`);
  }

  stats(): SchedulerStats {
    return this.policy.stats();
  }

  /** Before an agent's activation runs: resolves once it holds a turn slot. */
  async admitTurn(agent: SchedulerAgent): Promise<void> {
    if (!this.governsAgents || this.holding.has(agent.id)) return;
    const request = { kind: 'agent', agentId: agent.id, depth: agent.depth } as const;
    if (this.policy.admitNow(request)) {
      this.holding.add(agent.id);
      return;
    }
    if (await this.acquire(request)) this.holding.add(agent.id);
  }

  /**
   * The agent's activation ended (or it was disposed): its slot and any model lease are freed, and its
   * credit cell (void now) goes to the next activation planned — its driver is gone.
   */
  releaseTurn(agentId: string): void {
    this.releaseModel(agentId);
    const credit = this.credits.get(agentId);
    if (credit !== undefined) {
      this.credits.delete(agentId);
      this.spareCredits.push(credit.cell);
    }
    if (!this.holding.delete(agentId)) return;
    this.policy.releaseAgent();
    this.pump();
  }

  /**
   * The agent waits on `work` outside its own turn — a foreground child's result, a host's answer to
   * an approval, a top-level run its tool call started: it does not count as running meanwhile (its slot is free while any such wait is
   * open), and once none is left it waits for a slot again, deeper first, before `work`'s outcome is
   * seen — only while `running` (its activation still runs and still wants it), or the slot would
   * outlive it. The one place an agent's slot is lent out and taken back.
   */
  waitOn<T>(agent: SchedulerAgent, running: () => boolean, work: Promise<T>): Promise<T> {
    if (!this.governsAgents) return work;
    this.waitStarted(agent.id);
    return work.finally(() => this.waitEnded(agent, running));
  }

  /**
   * Runs `work`, a tool call of `caller.agent` in the parent, as that agent's: a top-level run it
   * starts and waits for (waitingOnRun) lends out the caller's slot. Nothing is kept when agents are
   * not governed.
   */
  asCaller<T>(caller: ToolCaller, work: () => T): T {
    return this.governsAgents ? this.callers.run(caller, work) : work();
  }

  /**
   * A top-level run of `agentId` was started: when a tool call of another agent started it, that
   * agent waits on it without its slot (waitOn), so the run can be admitted under any `agents`.
   */
  waitingOnRun<T>(agentId: string, result: Promise<T>): Promise<T> {
    const caller = this.governsAgents ? this.callers.current() : undefined;
    if (caller === undefined || caller.agent.id === agentId) return result;
    return this.waitOn(caller.agent, caller.running, result);
  }

  private waitStarted(agentId: string): void {
    this.waits.set(agentId, (this.waits.get(agentId) ?? 0) + 1);
    if (this.holding.delete(agentId)) {
      this.policy.releaseAgent();
      this.pump();
    }
  }

  /** Nothing to wait for (undefined) costs no promise: every child of a fan-out ends here. */
  private waitEnded(agent: SchedulerAgent, running: () => boolean): Promise<void> | undefined {
    const left = (this.waits.get(agent.id) ?? 0) - 1;
    if (left > 0) {
      this.waits.set(agent.id, left);
      return undefined;
    }
    this.waits.delete(agent.id);
    return running() ? this.readmit(agent, running) : undefined;
  }

  private async readmit(agent: SchedulerAgent, running: () => boolean): Promise<void> {
    await this.admitTurn(agent);
    // It ended while it waited: the slot it just took goes back.
    if (!running()) this.releaseTurn(agent.id);
  }

  /**
   * Before one model request (or its retry after a 429/503, with the announced pause): resolves when
   * the request may go — with its slot on this clock when the provider is paced (requestsPerMinute;
   * it may be admitted a little ahead of it). The agent's previous lease, if any, is released first:
   * a driver makes one request at a time, and a throttled request holds no slot while it waits.
   */
  async admitModel(agent: SchedulerAgent, request: ModelAdmission): Promise<number | undefined> {
    const { provider, tokens, retryAfterMs } = request;
    // Paused first: the slot the refused request frees must not go to the next one before the pause holds.
    if (retryAfterMs !== undefined) {
      this.policy.pause(provider, retryAfterMs);
      this.events.throttled(agent.id, provider, retryAfterMs);
    }
    if (request.givenBack === true) this.releaseUnsent(agent.id);
    else this.releaseModel(agent.id);
    if (!this.governsModels(provider)) return undefined;
    const claims = request.claims === true ? ({ claimsOwnSlot: true } as const) : {};
    const ticket = await this.acquire({
      kind: 'model-request',
      agentId: agent.id,
      depth: agent.depth,
      provider,
      tokens,
      ...claims,
    });
    if (ticket !== undefined)
      this.leases.set(agent.id, {
        provider,
        tokens,
        ...(ticket.sendAt === undefined ? {} : { sendAt: ticket.sendAt }),
        ...claims,
      });
    return ticket?.sendAt;
  }

  /**
   * An activation's first model request, admitted with its plan when that costs no waiting (see
   * AdmissionPolicy.admitNow): true when the agent now holds its lease, released as any other.
   */
  admitFirstRequest(agent: SchedulerAgent, provider: string): boolean {
    if (!this.governsModels(provider) || this.leases.has(agent.id)) return false;
    const request = { kind: 'model-request', agentId: agent.id, depth: agent.depth, provider, tokens: 0 } as const;
    if (!this.policy.admitNow(request)) return false;
    this.leases.set(agent.id, { provider, tokens: 0 });
    return true;
  }

  /**
   * The cell through which the agent's driver learns that its next request was admitted ahead
   * (admitAhead), so it asks nothing: for drivers in this process, of an unpaced governed provider.
   */
  creditCell(agentId: string, provider: string): SharedArrayBuffer | undefined {
    if (!this.governsModels(provider) || this.policy.paced(provider)) return undefined;
    let credit = this.credits.get(agentId);
    if (credit?.provider !== provider) {
      credit = { cell: this.spareCredits.pop() ?? new Int32Array(new SharedArrayBuffer(4)), provider };
      this.credits.set(agentId, credit);
    }
    return credit.cell.buffer as SharedArrayBuffer;
  }

  /**
   * The agent's tool results are about to cross to its driver, whose next model request follows:
   * admitted now when that costs no waiting (as an activation's first request), so the driver asks
   * nothing. Unused (the turn ended first), the lease goes with the next release.
   */
  admitAhead(agent: SchedulerAgent): void {
    const credit = this.credits.get(agent.id);
    if (credit === undefined || !this.admitFirstRequest(agent, credit.provider)) return;
    Atomics.store(credit.cell, 0, 1);
  }

  /** The agent's admitted request was never sent: its slot and tokens go back. */
  private releaseUnsent(agentId: string): void {
    const lease = this.leases.get(agentId);
    if (lease === undefined) return;
    this.leases.delete(agentId);
    this.policy.releaseUnsent(lease);
    this.pump();
  }

  /** The agent's model response arrived (its usage, when reported, corrects the token estimate). */
  releaseModel(agentId: string, usedTokens?: number): void {
    const credit = this.credits.get(agentId);
    if (credit !== undefined) Atomics.store(credit.cell, 0, 0); // a credit not taken is void with its lease
    const lease = this.leases.get(agentId);
    if (lease === undefined) return;
    this.leases.delete(agentId);
    this.policy.releaseModel(lease, usedTokens);
    this.pump();
  }

  /** Resolves with the admitted ticket, or undefined when it was withdrawn (its agent is gone). */
  private acquire(request: TicketRequest): Promise<Ticket | undefined> {
    if (this.policy.full) return Promise.reject(this.queueFullError());
    const { ticket, position } = this.policy.enqueue(request);
    return new Promise<Ticket | undefined>((resolve) => {
      this.waiters.set(ticket.id, { ticket, resolve: (admitted) => resolve(admitted ? ticket : undefined) });
      const admittedAtOnce = this.pumpNow().includes(ticket.id);
      if (admittedAtOnce) return;
      this.announced.add(ticket.id);
      this.events.queued(request.agentId, request.kind, request.provider, position);
    });
  }

  private pump(): void {
    this.pumpNow();
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
        this.pump();
      },
      // A longer delay would make Node fire at once (and warn), every millisecond: woken early, it re-arms.
      Math.min(MAX_TIMER_MS, Math.max(0, wakeAt - this.now())),
    );
  }

  /** The agent is disposed: what it waits for is withdrawn (its waits end at once) and what it holds is freed. */
  abandon(agentId: string): void {
    if (this.waiters.size > 0) this.withdrawWaits(agentId);
    this.waits.delete(agentId);
    this.releaseTurn(agentId);
    this.credits.delete(agentId);
  }

  private withdrawWaits(agentId: string): void {
    for (const waiter of [...this.waiters.values()]) {
      if (waiter.ticket.agentId !== agentId) continue;
      this.policy.withdraw(waiter.ticket);
      this.waiters.delete(waiter.ticket.id);
      this.announced.delete(waiter.ticket.id);
      waiter.resolve(false);
    }
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
