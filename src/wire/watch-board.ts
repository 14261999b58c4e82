/**
 * Shared memory through which the parent watches pool threads (SPEC §10.4–§10.5). Every thread owns a
 * slot, indexed by its threadId: the token of the driver activation executing on it right now (0 when
 * none) and a heartbeat counter. Both are written by the worker and read by the parent — also after
 * the thread died, which is how the parent knows which driver killed it.
 */
export const BOARD_SLOTS = 4096;
const FIELDS = 2;
const TOKEN = 0;
const HEARTBEAT = 1;

export function createBoard(): SharedArrayBuffer {
  return new SharedArrayBuffer(BOARD_SLOTS * FIELDS * Int32Array.BYTES_PER_ELEMENT);
}

export class WatchBoard {
  private readonly cells: Int32Array;

  constructor(buffer: SharedArrayBuffer) {
    this.cells = new Int32Array(buffer);
  }

  private index(threadId: number, field: number): number {
    return (threadId % BOARD_SLOTS) * FIELDS + field;
  }

  setRunning(threadId: number, token: number): void {
    Atomics.store(this.cells, this.index(threadId, TOKEN), token);
  }

  running(threadId: number): number {
    return Atomics.load(this.cells, this.index(threadId, TOKEN));
  }

  beat(threadId: number): void {
    Atomics.add(this.cells, this.index(threadId, HEARTBEAT), 1);
  }

  heartbeat(threadId: number): number {
    return Atomics.load(this.cells, this.index(threadId, HEARTBEAT));
  }

  /** A fresh thread may reuse a slot once threadIds wrap around BOARD_SLOTS. */
  reset(threadId: number): void {
    Atomics.store(this.cells, this.index(threadId, TOKEN), 0);
  }
}
