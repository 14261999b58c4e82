/**
 * How many of a tool batch's calls the parent starts per turn of its event loop. A start can be a lot
 * of synchronous work that never reaches real I/O (a delegation sets up a child: session, plan,
 * placement), and a pool of 64 fills, or refills as a wave of children ends, in one chain of
 * microtasks: unbroken, it blocked the host's event loop for 10+ ms. The rest wait for the next
 * turns, in order.
 *
 * A fixed 2 per turn kept the loop's p99 low (latency-only N=256 P=64: 8 per turn 9.8–12.1 ms, 4
 * 7.7–9.4, 2 7.0–10.4, 1 no better than 2), but in a wide fan-out every turn then sent each pool thread
 * one child's start in its own message, and a message that wakes an idle thread is most of that
 * child's start on a VM (~50 µs to post, plus the thread's own wake-up). So the count adapts to what a
 * turn costs: it doubles while the last turn of the loop (start to start, the starts' microtasks and
 * whatever else ran in it included) stayed within TURN_BUDGET_MS, and halves when one did not.
 */
const MIN_STARTS_PER_TURN = 2;
const MAX_STARTS_PER_TURN = 64;
export const TURN_BUDGET_MS = 4;

export class StartGate {
  private perTurn = MIN_STARTS_PER_TURN;
  private startedThisTurn = 0;
  private readonly waiting: (() => void)[] = [];
  private turnScheduled = false;
  /** When the last turn that started calls began (undefined: none has yet). */
  private turnBegan: number | undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

  run<T>(start: () => Promise<T>): Promise<T> {
    if (this.startedThisTurn < this.perTurn && this.waiting.length === 0) {
      this.startedThisTurn += 1;
      if (this.turnBegan === undefined) this.turnBegan = this.now();
      // Only a batch that reaches the bound needs the count reset at the next turn (most batches of a
      // fan-out's children are one call: no immediate for them).
      if (this.startedThisTurn === this.perTurn) this.scheduleTurn();
      return start();
    }
    this.scheduleTurn();
    return new Promise<T>((resolve) => this.waiting.push(() => resolve(start())));
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => this.nextTurn());
  }

  private nextTurn(): void {
    this.turnScheduled = false;
    this.adapt();
    const due = this.waiting.splice(0, this.perTurn);
    this.startedThisTurn = due.length;
    this.turnBegan = due.length > 0 ? this.now() : undefined;
    for (const start of due) start();
    if (this.waiting.length > 0 || due.length > 0) this.scheduleTurn();
  }

  /** The last turn that started calls as long as a whole turn of the loop: within budget, more next time. */
  private adapt(): void {
    if (this.turnBegan === undefined || this.startedThisTurn < this.perTurn) return;
    const took = this.now() - this.turnBegan;
    if (took <= TURN_BUDGET_MS) this.perTurn = Math.min(MAX_STARTS_PER_TURN, this.perTurn * 2);
    else this.perTurn = Math.max(MIN_STARTS_PER_TURN, Math.floor(this.perTurn / 2));
  }
}
