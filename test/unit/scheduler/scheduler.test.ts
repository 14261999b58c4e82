/** The scheduler's glue: one lease per activation, the first request admitted with a plan, events only for what queued. */
import { describe, expect, it, vi } from 'vitest';
import { Scheduler, type SchedulerEvents } from '../../../src/scheduler/scheduler.js';
import type { Limits } from '../../../src/scheduler/types.js';

function schedulerWith(limits: Limits) {
  const seen: string[] = [];
  const events: SchedulerEvents = {
    queued: (agentId, what) => seen.push(`queued ${agentId} ${what}`),
    admitted: (agentId, what) => seen.push(`admitted ${agentId} ${what}`),
    throttled: (agentId) => seen.push(`throttled ${agentId}`),
  };
  const scheduler = new Scheduler(limits, () => 0, events);
  return { scheduler, seen, lease: (id: string) => scheduler.openLease(agent(id)) };
}

const agent = (id: string) => ({ id, depth: 1 });

describe('Scheduler', () => {
  it("admits an activation's first request with its plan while it fits, and holds that lease until released", async () => {
    const { scheduler, seen, lease } = schedulerWith({ providers: { p: { concurrent: 1 } } });
    const [a, b] = [lease('a'), lease('b')];
    expect(a.admitFirstRequest('p')).toBe(true);
    expect(scheduler.stats().inFlight).toEqual({ p: 1 });
    // The limit is reached: the next activation's first request asks (and queues) as any other.
    expect(b.admitFirstRequest('p')).toBe(false);
    let admitted = false;
    const waiting = b.admitModel({ provider: 'p', tokens: 1 }).then(() => (admitted = true));
    await Promise.resolve();
    expect(admitted).toBe(false);
    a.requestAnswered(10); // a's response was logged
    await waiting;
    expect(seen).toEqual(['queued b model-request', 'admitted b model-request']);
    expect(scheduler.stats().inFlight).toEqual({ p: 1 });
  });

  it('admits nothing with a plan for an ungoverned provider, nor for a paced one', () => {
    const { scheduler, lease } = schedulerWith({ providers: { paced: { requestsPerMinute: 600 } } });
    const a = lease('a');
    expect(a.admitFirstRequest('other')).toBe(false);
    expect(a.admitFirstRequest('paced')).toBe(false);
    expect(Object.values(scheduler.stats().inFlight).every((count) => count === 0)).toBe(true);
  });

  it('frees the lease of a first request its activation never made when the activation ends', () => {
    const { scheduler, lease } = schedulerWith({ providers: { p: { concurrent: 1 } } });
    const a = lease('a');
    a.admitFirstRequest('p');
    a.release();
    expect(scheduler.stats().inFlight).toEqual({ p: 0 });
    expect(lease('b').admitFirstRequest('p')).toBe(true);
  });

  it("names a paced request's slot, and a refused request's retry pauses the provider for everyone", async () => {
    const { scheduler, seen, lease } = schedulerWith({ providers: { p: { requestsPerMinute: 6_000 } } });
    const a = lease('a');
    expect(await a.admitModel({ provider: 'p', tokens: 1 })).toBe(0);
    const retry = a.admitModel({ provider: 'p', tokens: 1, retryAfterMs: 50 });
    expect(seen).toContain('throttled a');
    expect(scheduler.stats().throttledMs).toBe(50);
    scheduler.close(); // the runtime closed: the waiting retry ends
    expect(await retry).toBeUndefined();
  });
  it('pauses the provider before a refused request frees its slot: the next queued request waits out the pause', async () => {
    let now = 0;
    const scheduler = new Scheduler({ providers: { p: { concurrent: 4 } } }, () => now, {
      queued: () => {},
      admitted: () => {},
      throttled: () => {},
    });
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((id) => scheduler.openLease(agent(id)));
    for (const held of [a, b, c, d]) await held?.admitModel({ provider: 'p', tokens: 1 });
    let nextAdmitted = false;
    const next = e?.admitModel({ provider: 'p', tokens: 1 }).then(() => (nextAdmitted = true));
    // d was answered 429 with retry-after 1 s: it asks again, and its slot is free — but not for e yet.
    const retry = d?.admitModel({ provider: 'p', tokens: 1, retryAfterMs: 1_000 });
    await Promise.resolve();
    expect(nextAdmitted).toBe(false);
    expect(scheduler.stats().inFlight).toEqual({ p: 3 });
    now = 1_000;
    a?.requestAnswered(); // any pump after the pause admits what waited
    await Promise.all([next, retry]);
    expect(scheduler.stats().inFlight).toEqual({ p: 4 });
    scheduler.close();
  });

  it("lends out a waiting agent's turn slot and takes one back before the wait's outcome is seen", async () => {
    const { scheduler, lease } = schedulerWith({ agents: 1 });
    const [a, b] = [lease('a'), lease('b')];
    await a.admitTurn();
    let answer = (_: string): void => {};
    const outcome = a.lend(new Promise<string>((resolve) => (answer = resolve)));
    expect(scheduler.stats().running).toBe(0);
    await b.admitTurn(); // admitted while a waits
    let seen: string | undefined;
    void outcome.then((value) => (seen = value));
    answer('approved');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(seen).toBeUndefined(); // answered, but a holds no slot yet
    expect(scheduler.stats()).toMatchObject({ running: 1, queued: 1 });
    b.release();
    expect(await outcome).toBe('approved');
    expect(scheduler.stats()).toMatchObject({ running: 1, queued: 0 });
  });

  it('a released lease frees its slot and its model request, and withdraws what it still waits for', async () => {
    const { scheduler, lease } = schedulerWith({ agents: 1, providers: { p: { concurrent: 1 } } });
    const [a, b] = [lease('a'), lease('b')];
    await a.admitTurn();
    await a.admitModel({ provider: 'p', tokens: 1 });
    const bTurn = b.admitTurn();
    const bRequest = b.admitModel({ provider: 'p', tokens: 1 });
    expect(scheduler.stats()).toMatchObject({ running: 1, queued: 2, inFlight: { p: 1 } });
    b.release(); // b's activation ended while it waited: nothing is admitted to it later
    await bTurn;
    expect(await bRequest).toBeUndefined();
    expect(b.holds).toBe(false);
    expect(scheduler.stats()).toMatchObject({ running: 1, queued: 0, inFlight: { p: 1 } });
    a.release();
    a.release(); // idempotent: released once
    expect(scheduler.stats()).toMatchObject({ running: 0, queued: 0, inFlight: { p: 0 } });
  });

  it('takes no slot back for a lend that ends after its lease was released, nor for one whose call was cancelled', async () => {
    const { scheduler, lease } = schedulerWith({ agents: 1 });
    const [a, b] = [lease('a'), lease('b')];
    await a.admitTurn();
    await a.lend(Promise.resolve()); // an ordinary wait: the slot comes back
    expect(a.holds).toBe(true);
    let answer = (): void => {};
    const outlived = a.lend(new Promise<void>((resolve) => (answer = resolve)));
    a.release(); // the activation ended before the wait did
    answer();
    await outlived;
    expect(scheduler.stats()).toMatchObject({ running: 0, queued: 0 });
    await b.admitTurn();
    const cancelled = new AbortController();
    const parked = b.lend(Promise.resolve(), cancelled.signal);
    cancelled.abort();
    await parked;
    expect(b.holds).toBe(false);
    expect(scheduler.stats()).toMatchObject({ running: 0, queued: 0 });
  });

  it('never hands a timer a delay past 2^31 - 1 ms, however long the pause', async () => {
    const { scheduler } = schedulerWith({ providers: { p: { concurrent: 1 } } });
    const delays: number[] = [];
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((_fn: () => void, ms: number) => {
      delays.push(ms);
      return { unref() {} } as unknown as NodeJS.Timeout;
    }) as typeof setTimeout);
    try {
      void scheduler.openLease(agent('a')).admitModel({ provider: 'p', tokens: 1, retryAfterMs: 2 ** 40 });
      await Promise.resolve();
      expect(delays).toEqual([2 ** 31 - 1]);
    } finally {
      spy.mockRestore();
      scheduler.close();
    }
  });

  it("admits an agent's next request ahead, with its tool results, while it fits: a credit its driver takes once", async () => {
    const { scheduler, lease } = schedulerWith({ providers: { p: { concurrent: 1 } } });
    const [a, b] = [lease('a'), lease('b')];
    const cell = new Int32Array(a.creditCell('p') ?? new SharedArrayBuffer(4));
    a.admitAhead();
    expect(Atomics.load(cell, 0)).toBe(1);
    expect(scheduler.stats().inFlight).toEqual({ p: 1 });
    // The driver takes the credit and sends; its logged response releases the lease as any other.
    Atomics.store(cell, 0, 0);
    a.requestAnswered(10);
    expect(scheduler.stats().inFlight).toEqual({ p: 0 });
    // Another agent holds the only slot: no credit, the driver asks (and waits) as usual.
    expect(b.admitFirstRequest('p')).toBe(true);
    a.admitAhead();
    expect(Atomics.load(cell, 0)).toBe(0);
    b.requestAnswered();
    // A credit never taken (the turn ended first) is void with its lease.
    a.admitAhead();
    a.requestAnswered();
    expect(Atomics.load(cell, 0)).toBe(0);
    expect(scheduler.stats().inFlight).toEqual({ p: 0 });
  });

  it("hands an ended activation's credit cell, void, to the next activation planned (no new shared memory per child)", () => {
    const { scheduler, lease } = schedulerWith({ providers: { p: { concurrent: 2 } } });
    const a = lease('a');
    const first = a.creditCell('p');
    a.admitAhead(); // admitted ahead, never taken: the activation ended first
    expect(lease('b').creditCell('p')).not.toBe(first); // a's activation still runs: b gets a cell of its own
    a.release();
    const next = lease('c').creditCell('p');
    expect(next).toBe(first);
    expect(Atomics.load(new Int32Array(next ?? new SharedArrayBuffer(4)), 0)).toBe(0);
    expect(scheduler.stats().inFlight).toEqual({ p: 0 });
    // The same agent's next activation keeps asking for one: it gets a cell again.
    expect(lease('a').creditCell('p')).toBeInstanceOf(SharedArrayBuffer);
  });

  it('gives no credit cell for a paced or ungoverned provider (those drivers ask, or take slots)', () => {
    const { lease } = schedulerWith({ providers: { paced: { requestsPerMinute: 600 }, p: { concurrent: 2 } } });
    const a = lease('a');
    expect(a.creditCell('paced')).toBeUndefined();
    expect(a.creditCell('other')).toBeUndefined();
    expect(a.creditCell('p')).toBeInstanceOf(SharedArrayBuffer);
  });
});
