/**
 * One activation of the worker runner, as the runner and the caller both see it: what the thread
 * link places and settles (PlacedActivation) and what the agent holds (Activation). A class, its
 * methods on the prototype: a wide fan-out keeps one per running child, and as closures over the
 * runner's activate() they were five functions and their shared scope each.
 */
import type { GatewayRemote } from '../wire/gateway.js';
import type { Activation, ActivationEnd } from '../wire/runner.js';
import { endsAtLastTurn } from './last-turn.js';
import type { ThreadGroup } from './thread-group.js';
import type { PlacedActivation, ThreadLink } from './thread-link.js';

/** What an activation asks of its runner (one per runner, shared by all its activations). */
export interface ActivationOwner {
  isLive(token: number): boolean;
  /** Its end as the caller sees it, once the runner has let go of it. */
  settled(activation: RunnerActivation, end: ActivationEnd | { outcome: unknown }): ActivationEnd;
  /** Ends a still unplaced activation whose planned turn was cancelled; false when it does not apply. */
  endsUnplaced(activation: RunnerActivation, plannedTurn: number | undefined, turn: number | undefined): boolean;
  forceStop(activation: RunnerActivation, reason: string): void;
  endAtLastTurn(activation: RunnerActivation): void;
}

export class RunnerActivation implements PlacedActivation, Activation {
  readonly done: Promise<ActivationEnd>;
  readonly gateway: GatewayRemote;
  thread: ThreadLink | undefined = undefined;
  cancelled: { turn?: number } | undefined = undefined;
  /** Ends the activation if its thread's `end` frame is late (endAtLastTurn). */
  endTimer: NodeJS.Timeout | undefined = undefined;
  private resolveDone!: (end: ActivationEnd) => void;

  constructor(
    private readonly owner: ActivationOwner,
    readonly token: number,
    readonly agentId: string,
    readonly quarantined: boolean,
    gateway: GatewayRemote,
    readonly group: ThreadGroup,
    /** The turn of the plan's first message, unless the plan resumes a turn (all it keeps of the plan). */
    private readonly plannedTurn: number | undefined,
  ) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.gateway = quarantined ? gateway : endsAtLastTurn(gateway, this);
  }

  /** First call wins. */
  settle(end: ActivationEnd | { outcome: unknown }): void {
    if (!this.owner.isLive(this.token)) return;
    this.resolveDone(this.owner.settled(this, end));
  }

  cancel(turn?: number): void {
    if (this.thread) this.thread.cancel(this.token, turn);
    else if (this.owner.endsUnplaced(this, this.plannedTurn, turn)) return;
    else this.cancelled = turn === undefined ? {} : { turn };
  }

  forceStop(reason: string): void {
    this.owner.forceStop(this, reason);
  }

  endAtLastTurn(): void {
    this.owner.endAtLastTurn(this);
  }
}
