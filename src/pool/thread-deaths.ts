/**
 * Deciding who a thread death belongs to (SPEC §10.5). The watch board says which activation was
 * executing when the thread died; that one fails, every other activation on the thread is recovered.
 * When the board cannot decide (nobody was executing), the co-hosted activations are suspects: each
 * is recovered, and one that was present at two deaths is isolated in a quarantine thread of its own
 * — if it kills that thread too, it is the culprit.
 */
import type { ActivationEnd } from '../wire/runner.js';
import type { WatchBoard } from '../wire/watch-board.js';

export interface PlannedKill {
  culprit: number;
  reason: string;
  stopReason: 'error' | 'aborted';
}

export interface DeadActivation {
  token: number;
  agentId: string;
  threadId: number;
  quarantined: boolean;
}

export class DeathJudge {
  /** Threads the runner recycled on purpose (hang watchdog, cancellation grace), by threadId. */
  readonly plannedKills = new Map<number, PlannedKill>();
  private readonly suspicion = new Map<string, number>();

  constructor(private readonly board: WatchBoard) {}

  isQuarantined(agentId: string): boolean {
    return (this.suspicion.get(agentId) ?? 0) >= 2;
  }

  /** A clean finish clears suspicion: the driver returns to the shared pool. */
  cleared(agentId: string): void {
    this.suspicion.delete(agentId);
  }

  judge(dead: DeadActivation, cause: string): ActivationEnd {
    if (dead.threadId === 0) return { kind: 'recover' }; // the task never reached a thread
    const planned = this.plannedKills.get(dead.threadId);
    const culprit = planned?.culprit ?? this.board.running(dead.threadId);
    if (dead.quarantined || culprit === dead.token) {
      this.suspicion.delete(dead.agentId);
      return {
        kind: 'failed',
        stopReason: planned?.stopReason ?? 'error',
        diagnostic: planned?.reason ?? `its worker thread died: ${cause}`,
      };
    }
    if (culprit === 0) this.suspicion.set(dead.agentId, (this.suspicion.get(dead.agentId) ?? 0) + 1);
    return { kind: 'recover' };
  }
}
