/**
 * What one agent's activation holds of the scheduler, in one object with one owner: its turn slot
 * (limits.agents), the model request its driver has in flight (a RequestLease), and the cell through
 * which an in-process driver learns that its next request was admitted ahead. The agent's governor
 * opens it when an activation starts and releases it when the activation ends or the agent is
 * disposed (src/agents/governor.ts): everything it holds is freed then, and whatever it still waits
 * for is withdrawn. Nothing is released by agent id.
 */

import type { Cancellation } from '../util/lazy-abort.js';
import type { ModelLease, Ticket, TicketRequest } from './policy.js';

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

/** The scheduler's side of a lease (Scheduler makes one per scheduler): counts, queue and cells. */
export interface LeaseDesk {
  readonly governsAgents: boolean;
  governsModels(provider: string): boolean;
  paced(provider: string): boolean;
  /** Takes a slot at once when that costs no waiting (AdmissionPolicy.admitNow). */
  admitNow(request: TicketRequest): boolean;
  /**
   * Queues `request` (QUEUE_FULL past limits.queue.max); `settle` is called synchronously with its
   * admission (true) or its withdrawal (false), so what it takes is held from that instant.
   */
  enqueue(request: TicketRequest, settle: (ticket: Ticket, admitted: boolean) => void): Ticket;
  withdraw(ticket: Ticket): void;
  releaseAgent(): void;
  releaseModel(lease: ModelLease, usedTokens?: number): void;
  releaseUnsent(lease: ModelLease): void;
  /** A provider answered "retry after": it is paused for every agent. */
  throttle(agentId: string, provider: string, retryAfterMs: number): void;
  /** A credit cell: a spare one of an ended activation, or a new one. */
  creditCell(): Int32Array;
  spareCreditCell(cell: Int32Array): void;
}

/** An admitted model request: released once, when its response is logged or it is given back unsent. */
class RequestLease {
  constructor(
    readonly terms: ModelLease,
    private readonly desk: LeaseDesk,
  ) {}

  /** Its response arrived (its usage, when reported, corrects the token estimate). */
  answered(usedTokens?: number): void {
    this.desk.releaseModel(this.terms, usedTokens);
  }

  /** It was never sent: its slot and tokens go back. */
  unsent(): void {
    this.desk.releaseUnsent(this.terms);
  }
}

export class TurnLease implements Disposable {
  private holding = false;
  /** Waits open outside the turn (lend): while any, the lease holds no slot. */
  private lent = 0;
  private released = false;
  private request: RequestLease | undefined;
  private credit: { cell: Int32Array; provider: string } | undefined;
  /** Tickets still queued, withdrawn when the lease is released (made by the first that waits: most never do). */
  private queued: Set<Ticket> | undefined;

  constructor(
    readonly agent: SchedulerAgent,
    private readonly desk: LeaseDesk,
  ) {}

  [Symbol.dispose](): void {
    this.release();
  }

  /** Frees everything the lease holds and withdraws what it waits for; idempotent. A method: every running agent has a lease. */
  release(): void {
    if (!this.released) this.end();
  }

  /** It holds a turn slot now. */
  get holds(): boolean {
    return this.holding;
  }

  /** Before the activation runs: resolves once the lease holds a turn slot (at once when agents are not governed). */
  async admitTurn(): Promise<void> {
    if (!this.desk.governsAgents || this.holding || this.released) return;
    const request = { kind: 'agent', agentId: this.agent.id, depth: this.agent.depth } as const;
    if (this.desk.admitNow(request)) this.holding = true;
    else
      await this.queue(request, () => {
        this.holding = true;
      });
  }

  /**
   * The agent waits on `work` outside its own turn — a foreground child's result, a host's answer to
   * an approval, a top-level run its tool call started: its slot is lent out while any such wait is
   * open, and once none is left it waits for a slot again, deeper first, before `work`'s outcome is
   * seen — unless the lease was released meanwhile (its activation ended) or `keepOut` aborted (a
   * cancelled call takes none back). The one place a slot is lent out and taken back.
   */
  lend<T>(work: Promise<T>, keepOut?: Cancellation): Promise<T> {
    if (!this.desk.governsAgents) return work;
    this.lent += 1;
    if (this.holding) {
      this.holding = false;
      this.desk.releaseAgent();
    }
    return work.finally(() => this.lendEnded(keepOut));
  }

  /** Nothing to wait for (undefined) costs no promise: every child of a fan-out ends here. */
  private lendEnded(keepOut: Cancellation | undefined): Promise<void> | undefined {
    this.lent -= 1;
    if (this.lent > 0 || this.released || keepOut?.aborted === true) return undefined;
    return this.admitTurn();
  }

  /**
   * Before one model request (or its retry after a 429/503, with the announced pause): resolves when
   * the request may go — with its slot on the scheduler's clock when the provider is paced
   * (requestsPerMinute; it may be admitted a little ahead of it). The previous request's lease is
   * released first: a driver makes one request at a time, and a throttled request holds no slot while
   * it waits.
   */
  async admitModel(admission: ModelAdmission): Promise<number | undefined> {
    const { provider, tokens, retryAfterMs } = admission;
    // Paused first: the slot the refused request frees must not go to the next one before the pause holds.
    if (retryAfterMs !== undefined) this.desk.throttle(this.agent.id, provider, retryAfterMs);
    if (admission.givenBack === true) this.takeRequest()?.unsent();
    else this.requestAnswered();
    if (!this.desk.governsModels(provider) || this.released) return undefined;
    const claims = admission.claims === true ? ({ claimsOwnSlot: true } as const) : {};
    const request = {
      kind: 'model-request',
      agentId: this.agent.id,
      depth: this.agent.depth,
      provider,
      tokens,
    } as const;
    let slot: number | undefined;
    await this.queue({ ...request, ...claims }, (ticket) => {
      slot = ticket.sendAt;
      const sendAt = ticket.sendAt === undefined ? {} : { sendAt: ticket.sendAt };
      this.request = new RequestLease({ provider, tokens, ...sendAt, ...claims }, this.desk);
    });
    return slot;
  }

  /**
   * An activation's first model request, admitted with its plan when that costs no waiting (see
   * AdmissionPolicy.admitNow): true when the lease now holds it, released as any other.
   */
  admitFirstRequest(provider: string): boolean {
    if (this.released || !this.desk.governsModels(provider) || this.request !== undefined) return false;
    const request = {
      kind: 'model-request',
      agentId: this.agent.id,
      depth: this.agent.depth,
      provider,
      tokens: 0,
    } as const;
    if (!this.desk.admitNow(request)) return false;
    this.request = new RequestLease({ provider, tokens: 0 }, this.desk);
    return true;
  }

  /**
   * The agent's tool results are about to cross to its driver, whose next model request follows:
   * admitted now when that costs no waiting (as an activation's first request), and the driver is
   * told through its credit cell, so it asks nothing. Unused, it goes with the next release.
   */
  admitAhead(): void {
    const credit = this.credit;
    if (credit === undefined || !this.admitFirstRequest(credit.provider)) return;
    Atomics.store(credit.cell, 0, 1);
  }

  /** The model response arrived (or the turn ended without one): the request's lease is released. */
  requestAnswered(usedTokens?: number): void {
    if (this.credit !== undefined) Atomics.store(this.credit.cell, 0, 0); // a credit not taken is void with its lease
    this.takeRequest()?.answered(usedTokens);
  }

  /**
   * The cell through which the activation's driver learns that its next request was admitted ahead
   * (admitAhead), so it asks nothing: for drivers in this process, of an unpaced governed provider.
   */
  creditCell(provider: string): SharedArrayBuffer | undefined {
    if (!this.desk.governsModels(provider) || this.desk.paced(provider)) return undefined;
    if (this.credit?.provider !== provider) this.credit = { cell: this.desk.creditCell(), provider };
    return this.credit.cell.buffer as SharedArrayBuffer;
  }

  private takeRequest(): RequestLease | undefined {
    const request = this.request;
    this.request = undefined;
    return request;
  }

  /** Resolves true once admitted (`take` ran with the admission), false when withdrawn. */
  private queue(request: TicketRequest, take: (ticket: Ticket) => void): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let settled = false;
      const ticket = this.desk.enqueue(request, (admittedTicket, admitted) => {
        settled = true;
        this.queued?.delete(admittedTicket);
        if (admitted) take(admittedTicket);
        resolve(admitted);
      });
      if (settled) return;
      this.queued ??= new Set();
      this.queued.add(ticket);
    });
  }

  /** Waits withdrawn first, so nothing is admitted to a lease that is gone; then what it holds is freed. */
  private end(): void {
    this.released = true;
    if (this.queued) for (const ticket of [...this.queued]) this.desk.withdraw(ticket);
    this.requestAnswered();
    if (this.credit !== undefined) {
      // Void now (its driver is gone): it goes to the next activation planned.
      this.desk.spareCreditCell(this.credit.cell);
      this.credit = undefined;
    }
    if (!this.holding) return;
    this.holding = false;
    this.desk.releaseAgent();
  }
}
