/**
 * LazyAbortController: a turn's cancellation that makes a real AbortSignal only when something reads
 * `signal`, and otherwise behaves as an AbortController does for brood's own code.
 */
import { describe, expect, it } from 'vitest';
import { onAbort } from '../../../src/util/abort-listeners.js';
import { LazyAbortController } from '../../../src/util/lazy-abort.js';

describe('LazyAbortController', () => {
  it('a signal read before the abort aborts with it, with the same reason', () => {
    const cancel = new LazyAbortController();
    const signal = cancel.signal;
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(cancel.signal).toBe(signal);
    const heard: unknown[] = [];
    signal.addEventListener('abort', () => heard.push(signal.reason));
    const reason = new Error('stop');
    cancel.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(heard).toEqual([reason]);
    expect(cancel.reason).toBe(reason);
  });

  it('a signal first read after the abort is already aborted, with its reason', () => {
    const cancel = new LazyAbortController();
    const reason = new Error('stop');
    cancel.abort(reason);
    expect(cancel.signal.aborted).toBe(true);
    expect(cancel.signal.reason).toBe(reason);
  });

  it('without a reason, the reason is an AbortError, as AbortController gives', () => {
    const cancel = new LazyAbortController();
    cancel.abort();
    expect(cancel.reason).toBeInstanceOf(DOMException);
    expect((cancel.reason as DOMException).name).toBe('AbortError');
    expect(cancel.signal.reason).toBe(cancel.reason);
  });

  it('listeners run once, in the order they were added; a removed one and one added twice', () => {
    const cancel = new LazyAbortController();
    const ran: string[] = [];
    const a = (): number => ran.push('a');
    const b = (): number => ran.push('b');
    const c = (): number => ran.push('c');
    cancel.addEventListener('abort', a);
    cancel.addEventListener('abort', b);
    cancel.addEventListener('abort', a);
    cancel.addEventListener('abort', c);
    cancel.removeEventListener('abort', b);
    cancel.abort(new Error('stop'));
    cancel.abort(new Error('again'));
    expect(ran).toEqual(['a', 'c']);
    expect((cancel.reason as Error).message).toBe('stop');
  });

  it('one listener alone: added twice it runs once; removed it does not run', () => {
    const once = new LazyAbortController();
    let ran = 0;
    const listener = (): void => {
      ran += 1;
    };
    once.addEventListener('abort', listener);
    once.addEventListener('abort', listener);
    once.abort(new Error('stop'));
    expect(ran).toBe(1);
    const removed = new LazyAbortController();
    removed.addEventListener('abort', listener);
    removed.removeEventListener('abort', listener);
    removed.abort(new Error('stop'));
    expect(ran).toBe(1);
  });

  it('a listener added after the abort never runs', () => {
    const cancel = new LazyAbortController();
    cancel.abort(new Error('stop'));
    const ran: string[] = [];
    cancel.addEventListener('abort', () => ran.push('late'));
    expect(ran).toEqual([]);
  });

  it('ten thousand sibling callbacks through onAbort each run once', () => {
    const cancel = new LazyAbortController();
    let ran = 0;
    const removers = Array.from({ length: 10_000 }, () => onAbort(cancel, () => ran++));
    for (const remove of removers.slice(0, 5_000)) remove();
    cancel.abort(new Error('stop'));
    expect(ran).toBe(5_000);
  });
});
