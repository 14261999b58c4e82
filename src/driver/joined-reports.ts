/**
 * Whether reports wait to join the running turn at its next model step (a child's `next-step`
 * report), read lock-free like the view versions: the parent bumps an Int32 cell, the driver compares
 * it before each step and asks the parent for the messages (one round trip) only when it moved.
 */
import type { DriverPlan } from '../wire/protocol.js';

export class JoinedReportsWatch {
  private readonly cell: Int32Array | undefined;
  private seen: number;

  constructor(plan: Pick<DriverPlan, 'stepCell' | 'stepSeen'>) {
    this.cell = plan.stepCell;
    // The value when the plan was made: a message accepted while the parent claimed this activation's
    // first message is still seen at its first step.
    this.seen = plan.stepSeen ?? this.read();
  }

  /** True once per bump: the caller asks for the messages now (a bump racing with that is seen next time). */
  take(): boolean {
    const now = this.read();
    if (now === this.seen) return false;
    this.seen = now;
    return true;
  }

  private read(): number {
    return this.cell === undefined ? 0 : Atomics.load(this.cell, 0);
  }
}
