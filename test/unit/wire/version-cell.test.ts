import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { driverPlan } from '../../../src/wire/protocol.js';
import { CellSlabs, VersionCell } from '../../../src/wire/version-cell.js';

/** What a driver thread receives: the cell cloned through a port, as plans cross. */
function crossed(cell: Int32Array): Int32Array {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage({ cell });
  const received = receiveMessageOnPort(port2)?.message as { cell: Int32Array };
  port1.close();
  return received.cell;
}

describe('version cells cut from shared slabs', () => {
  it('a bump in the parent is read through the copy a driver thread received', () => {
    const slabs = new CellSlabs();
    const first = slabs.take();
    const second = slabs.take();
    const seen = crossed(second.cell);
    second.bump();
    second.bump();
    first.bump();
    expect(Atomics.load(seen, 0)).toBe(2);
    expect(first.value).toBe(1);
    expect(second.value).toBe(2);
  });

  it('cells are distinct Int32s, a thousand and twenty-four to a shared buffer', () => {
    const slabs = new CellSlabs();
    const cells = Array.from({ length: 1500 }, () => slabs.take().cell);
    const buffers = [...new Set(cells.map((cell) => cell.buffer))];
    expect(buffers).toHaveLength(2);
    const places = new Set(cells.map((cell) => `${buffers.indexOf(cell.buffer)}:${cell.byteOffset}`));
    expect(places.size).toBe(1500);
    expect(cells.filter((cell) => cell.buffer === buffers[0])).toHaveLength(1024);
    for (const cell of cells) expect(cell.length).toBe(1);
  });

  /** The same Int32 of the same slab (views are made per take). */
  const samePlace = (a: Int32Array, b: Int32Array) => a.buffer === b.buffer && a.byteOffset === b.byteOffset;

  it('a released cell serves the next agent from zero, and the old owner can no longer move it', () => {
    const slabs = new CellSlabs();
    const holder = slabs.take(); // another agent's, alive throughout
    const old = slabs.take();
    old.bump();
    old.release();
    const next = slabs.take();
    expect(samePlace(next.cell, old.cell)).toBe(true);
    expect(next.value).toBe(0);
    old.bump(); // a late bump from the disposed agent
    expect(next.value).toBe(0);
    next.bump();
    expect(next.value).toBe(1);
    expect(holder.value).toBe(0);
  });

  it('an agent takes two cells of its own and gives both back when it is disposed', () => {
    const slabs = new CellSlabs();
    slabs.take(); // another agent's, alive throughout
    const agent = slabs.forAgent();
    expect(samePlace(agent.view.cell, agent.step.cell)).toBe(false);
    agent.view.bump();
    agent.release();
    agent.step.bump(); // late: changes nothing
    const next = slabs.forAgent();
    const places = (cells: typeof agent) => [cells.view.cell, cells.step.cell].map((cell) => cell.byteOffset).sort();
    expect(places(next)).toEqual(places(agent));
    expect(next.view.cell.buffer).toBe(agent.view.cell.buffer);
    expect([next.view.value, next.step.value]).toEqual([0, 0]);
  });

  it('releasing twice gives the cell back once', () => {
    const slabs = new CellSlabs();
    slabs.take(); // another agent's, alive throughout
    const cell = slabs.take();
    cell.release();
    cell.release();
    expect(samePlace(slabs.take().cell, cell.cell)).toBe(true);
    expect(samePlace(slabs.take().cell, cell.cell)).toBe(false);
  });

  it('cells given back are taken again before a new slab is cut', () => {
    const slabs = new CellSlabs();
    const cells = Array.from({ length: 1024 }, () => slabs.take());
    const buffer = cells[0]?.cell.buffer;
    for (const cell of cells.slice(0, 10)) cell.release();
    const again = Array.from({ length: 10 }, () => slabs.take());
    for (const { cell } of again) expect(cell.buffer).toBe(buffer);
    expect(slabs.take().cell.buffer).not.toBe(buffer); // the slab is full: the next one is cut
  });

  it('a cell without a slab is its own shared Int32', () => {
    const cell = new VersionCell();
    cell.bump();
    expect(Atomics.load(crossed(cell.cell), 0)).toBe(1);
    cell.release();
    cell.bump();
    expect(cell.value).toBe(1);
  });

  it('a plan whose cell is not one shared Int32 is refused at the boundary', () => {
    const plan = (versions: unknown[]) => ({
      agentId: 'a1',
      route: { provider: 'p', model: 'm' },
      view: null,
      history: [],
      ownStart: 0,
      maxParallelToolCalls: 1,
      maxSteps: 1,
      toolsInParent: true,
      codeMode: 'native',
      codeBusyTimeoutMs: 1,
      codeWallTimeoutMs: 1,
      codeLimits: { memoryMb: 1, stackKb: 1, maxOutputBytes: 1, maxToolCalls: 1 },
      versions,
    });
    expect(driverPlan.check(plan([new CellSlabs().take().cell]))).toBe(true);
    expect(driverPlan.check(plan([new SharedArrayBuffer(4)]))).toBe(false);
    expect(driverPlan.check(plan([new Int32Array(1)]))).toBe(false); // not shared: a bump would never arrive
    expect(driverPlan.check(plan([new Int32Array(new SharedArrayBuffer(8))]))).toBe(false); // two Int32s
  });
});
