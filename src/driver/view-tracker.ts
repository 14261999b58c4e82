/**
 * Keeps a driver's view fresh without a round trip per request: the parent bumps Int32 cells in a
 * SharedArrayBuffer on every registry or prompt change that may affect this agent; the driver compares
 * them before each request and re-fetches the resolved view only when they moved.
 */
import type { DriverView } from './types.js';

export class ViewTracker {
  private readonly cells: Int32Array[];
  private seen: number[];

  constructor(
    private view: DriverView,
    versions: SharedArrayBuffer[],
    private readonly refresh: () => Promise<DriverView>,
  ) {
    this.cells = versions.map((buffer) => new Int32Array(buffer));
    this.seen = this.read();
  }

  changed(): boolean {
    const now = this.read();
    return now.some((value, index) => value !== this.seen[index]);
  }

  async current(): Promise<DriverView> {
    if (!this.changed()) return this.view;
    // Read the versions before fetching: a change racing with the fetch is seen next time.
    const versions = this.read();
    this.view = await this.refresh();
    this.seen = versions;
    return this.view;
  }

  private read(): number[] {
    return this.cells.map((cell) => Atomics.load(cell, 0));
  }
}
