/**
 * Version cells: Int32s in shared memory, bumped by the parent and read lock-free by drivers. A cell
 * crosses to a driver as a one-element Int32Array over shared memory (DriverPlan `versions`,
 * `stepCell`, `eventsFlag`).
 *
 * Every agent owns two cells for its life, so a wide fan-out or 100,000 parked children hold
 * hundreds of thousands. A SharedArrayBuffer each cost ~0.6 KB in the parent and ~0.5 KB more in the
 * thread its driver runs on (the buffer object, its backing store and V8's bookkeeping of it), for
 * four bytes. Cells are therefore cut from slabs: one buffer per thousand cells, a view object each,
 * and a disposed agent's cells go back to its runtime's slabs for the next agents.
 */

/** Cells per slab: 4 KB of shared memory. */
const SLAB_CELLS = 1024;

export class VersionCell {
  private released = false;

  /** Without slabs: a cell of its own (a runtime's single cells, tests). */
  constructor(
    readonly cell: Int32Array = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)),
    private readonly slabs?: CellSlabs,
    /** Its place in the slabs (slab × SLAB_CELLS + index), when it has one. */
    private readonly slot = -1,
  ) {}

  bump(): void {
    // A cell handed back may already be another agent's: a late bump must not reach it.
    if (!this.released) Atomics.add(this.cell, 0, 1);
  }

  get value(): number {
    return Atomics.load(this.cell, 0);
  }

  /** Hands the cell back to its slab (once; its driver has ended). Later bumps change nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.slabs?.giveBack(this.slot);
  }
}

/** An agent's own cells, taken together when it is made and given back together when it is disposed. */
export class AgentCells {
  constructor(
    /** Bumped on every change to the agent's own tool or prompt layers (DriverPlan.versions[1]). */
    readonly view: VersionCell,
    /** Bumped when a message waits for the running turn's next model step (DriverPlan.stepCell). */
    readonly step: VersionCell,
  ) {}

  /** Once no driver of the agent runs any more. */
  release(): void {
    this.view.release();
    this.step.release();
  }
}

/**
 * A runtime's slabs: cells are taken when an agent is made and given back when it is disposed. Free
 * cells are kept as slot numbers (slab × SLAB_CELLS + index), not view objects: after a peak of
 * 100,000 agents a runtime keeps ~2.4 MB (their slabs and a number per free cell), not ~20 MB of
 * views. The slabs stay for the next peak: freeing them when the last cell comes back would cut a
 * new buffer each time a runtime goes idle.
 */
export class CellSlabs {
  private readonly slabs: SharedArrayBuffer[] = [];
  private readonly free: number[] = [];
  /** Slots ever cut from the slabs. */
  private cut = 0;

  forAgent(): AgentCells {
    return new AgentCells(this.take(), this.take());
  }

  take(): VersionCell {
    const slot = this.free.pop() ?? this.cutSlot();
    const slab = this.slabs[Math.floor(slot / SLAB_CELLS)] as SharedArrayBuffer;
    const cell = new Int32Array(slab, (slot % SLAB_CELLS) * Int32Array.BYTES_PER_ELEMENT, 1);
    Atomics.store(cell, 0, 0); // a reused cell reads as a fresh one
    return new VersionCell(cell, this, slot);
  }

  /** Called by VersionCell.release only. */
  giveBack(slot: number): void {
    this.free.push(slot);
  }

  private cutSlot(): number {
    if (this.cut === this.slabs.length * SLAB_CELLS)
      this.slabs.push(new SharedArrayBuffer(SLAB_CELLS * Int32Array.BYTES_PER_ELEMENT));
    const slot = this.cut;
    this.cut += 1;
    return slot;
  }
}
