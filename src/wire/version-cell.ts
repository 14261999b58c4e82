/** A version cell: one Int32 in shared memory, bumped by the parent and read lock-free by drivers. */
export class VersionCell {
  readonly buffer = new SharedArrayBuffer(4);
  private readonly cell = new Int32Array(this.buffer);

  bump(): void {
    Atomics.add(this.cell, 0, 1);
  }

  get value(): number {
    return Atomics.load(this.cell, 0);
  }
}
