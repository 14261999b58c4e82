/**
 * The handle pool fileSessions writes through: a bounded number of open files, and no thrashing when a
 * few more sessions than the cap write in turn (a 64-child fan-out and its parent, cap 64).
 */
import type { FileHandle } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { HandlePool } from '../../../src/sessions/handles.js';

/** A pool over fake handles that counts opens and closes. */
function counted(cap: number) {
  const pool = new HandlePool(cap);
  const counts = { opened: 0, closed: 0 };
  const handle = () => {
    counts.opened += 1;
    const close = async (): Promise<void> => {
      counts.closed += 1;
    };
    return Promise.resolve({ close } as unknown as FileHandle);
  };
  const write = (key: string) => pool.use(key, handle, async () => undefined);
  return { pool, counts, write, handle };
}

describe('HandlePool', () => {
  it('65 sessions writing in turn through a pool of 64: after the first round almost every write reuses its handle', async () => {
    const { counts, write, pool } = counted(64);
    const keys = Array.from({ length: 65 }, (_, i) => `s${i}`);
    for (let round = 0; round < 10; round++) for (const key of keys) await write(key);
    // Plain LRU would open a file for every one of the 650 writes.
    expect(counts.opened).toBeLessThanOrEqual(65 + 10);
    expect(pool.size).toBeLessThanOrEqual(64);
    await pool.closeAll(false);
    expect(counts.closed).toBe(counts.opened);
  });

  it('a session that has gone cold gives its handle to one being written', async () => {
    const { counts, write, pool } = counted(2);
    await write('old');
    await write('warm');
    for (let i = 0; i < 8; i++) await write('warm');
    await write('new');
    await write('new');
    expect(counts.opened).toBe(3); // 'old' went cold and was evicted; 'new' is cached from its first write
    expect(pool.size).toBe(2);
  });

  it('drop() closes a handle at once; never one in use', async () => {
    const { counts, pool, handle } = counted(4);
    await pool.use('a', handle, async () => undefined);
    pool.drop('a');
    expect(pool.size).toBe(0);
    let release!: () => void;
    const inUse = pool.use(
      'b',
      handle,
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    pool.drop('b');
    expect(pool.size).toBe(1);
    release();
    await inUse;
    await pool.closeAll(false);
    expect(counts).toEqual({ opened: 2, closed: 2 });
  });
});
