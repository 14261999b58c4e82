/** onAbort: many callbacks on one shared signal cost one real listener, and each runs once on abort. */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onAbort } from '../../../src/util/abort-listeners.js';

describe('onAbort', () => {
  it('a thousand callbacks on one signal add one listener to it, and each runs once when it aborts', () => {
    const controller = new AbortController();
    const ran: number[] = [];
    for (let i = 0; i < 1000; i++) onAbort(controller.signal, () => ran.push(i));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    controller.abort();
    expect(ran).toHaveLength(1000);
    expect(new Set(ran).size).toBe(1000);
  });

  it('a removed callback does not run; the others do', () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const removeA = onAbort(controller.signal, () => ran.push('a'));
    onAbort(controller.signal, () => ran.push('b'));
    removeA();
    removeA();
    controller.abort();
    expect(ran).toEqual(['b']);
  });

  it('like addEventListener, nothing runs for a signal that has already aborted', () => {
    const ran: string[] = [];
    const remove = onAbort(AbortSignal.abort(), () => ran.push('late'));
    remove();
    expect(ran).toEqual([]);
  });
});
