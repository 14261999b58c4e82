/** Placement policy (src/pool/placement.ts): where an activation goes and when a thread starts, without threads. */
import { describe, expect, it } from 'vitest';
import { leastLoaded, mayRetire, type ThreadLoad, threadsToStart } from '../../../src/pool/placement.js';

const thread = (threadId: number, load: number, closed = false): ThreadLoad => ({ threadId, load, closed });

describe('leastLoaded', () => {
  it('picks the thread with the fewest live activations, the first on a tie', () => {
    expect(leastLoaded([thread(1, 3), thread(2, 1), thread(3, 1)])?.threadId).toBe(2);
  });

  it('never picks a closed thread, and has no answer when every thread is closed or there is none', () => {
    expect(leastLoaded([thread(1, 0, true), thread(2, 5)])?.threadId).toBe(2);
    expect(leastLoaded([thread(1, 0, true)])).toBeUndefined();
    expect(leastLoaded([])).toBeUndefined();
  });
});

describe('threadsToStart', () => {
  it('the first need starts the whole warm set at once', () => {
    expect(threadsToStart({ started: 0, linked: [], warm: 2, max: 8 })).toBe(2);
    expect(threadsToStart({ started: 1, linked: [], warm: 2, max: 8 })).toBe(1);
  });

  it('never more than max, whatever the warm set says', () => {
    expect(threadsToStart({ started: 0, linked: [], warm: 4, max: 1 })).toBe(1);
    expect(threadsToStart({ started: 8, linked: [thread(1, 9)], warm: 2, max: 8 })).toBe(0);
  });

  it('past the warm set: one more only when every linked thread is busy and none is booting', () => {
    const busy = [thread(1, 2), thread(2, 1)];
    expect(threadsToStart({ started: 2, linked: busy, warm: 2, max: 8 })).toBe(1);
    expect(threadsToStart({ started: 3, linked: busy, warm: 2, max: 8 })).toBe(0); // the third still boots
    expect(threadsToStart({ started: 2, linked: [thread(1, 2), thread(2, 0)], warm: 2, max: 8 })).toBe(0);
  });

  it('an idle thread that is closing does not count as room', () => {
    expect(threadsToStart({ started: 2, linked: [thread(1, 2), thread(2, 0, true)], warm: 2, max: 8 })).toBe(1);
  });
});

describe('mayRetire', () => {
  it('only an idle thread, and only above the warm set', () => {
    expect(mayRetire(thread(1, 0), 3, 2)).toBe(true);
    expect(mayRetire(thread(1, 1), 3, 2)).toBe(false);
    expect(mayRetire(thread(1, 0), 2, 2)).toBe(false);
  });
});
