/**
 * Keeps a driver's view fresh without a round trip per request: the parent bumps Int32 cells in
 * shared memory on every registry or prompt change that may affect this agent; the driver compares
 * them before each request and re-fetches the resolved view only when they moved.
 */
import type { DriverView } from '../wire/protocol.js';

export class ViewTracker {
  private seen: number[];
  private view: DriverView;
  /** The plan came without a view (the parent could not resolve one): fetch before the first use. */
  private stale: boolean;

  constructor(
    view: DriverView | null,
    private readonly cells: Int32Array[],
    /** Called as `source.refreshView()` (a driver's gateway): no closure per driver to hold. */
    private readonly source: { refreshView(): Promise<DriverView> },
  ) {
    this.seen = this.read();
    this.view = view ?? { system: '', tools: [], classes: {} };
    this.stale = view === null;
  }

  /** The last view fetched (possibly stale), for callers that must not fail. */
  get last(): DriverView {
    return this.view;
  }

  changed(): boolean {
    if (this.stale) return true;
    // Called before every request and tool start: compare in place, allocate nothing.
    let index = 0;
    for (const cell of this.cells) {
      if (Atomics.load(cell, 0) !== this.seen[index]) return true;
      index += 1;
    }
    return false;
  }

  async current(): Promise<DriverView> {
    if (!this.changed()) return this.view;
    // Read the versions before fetching: a change racing with the fetch is seen next time.
    const versions = this.read();
    this.view = await this.source.refreshView();
    this.seen = versions;
    this.stale = false;
    return this.view;
  }

  private read(): number[] {
    return this.cells.map((cell) => Atomics.load(cell, 0));
  }
}
