/** The admission policy on a fake clock: order, counters, buckets, pauses. */
import { describe, expect, it } from 'vitest';
import { AdmissionPolicy, type TicketRequest } from '../../../src/scheduler/policy.js';
import type { Limits } from '../../../src/scheduler/types.js';

function policyOn(limits: Limits) {
  const clock = { now: 0 };
  const policy = new AdmissionPolicy(limits, () => clock.now);
  return { clock, policy };
}

const agent = (agentId: string, depth: number): TicketRequest => ({ kind: 'agent', agentId, depth });
const request = (agentId: string, provider: string, tokens = 10, depth = 0): TicketRequest => ({
  kind: 'model-request',
  agentId,
  depth,
  provider,
  tokens,
});

function admittedIds(policy: AdmissionPolicy): string[] {
  return policy.admit().admitted.map((ticket) => ticket.agentId);
}

describe('AdmissionPolicy', () => {
  it('admits at most limits.agents turns at once and the next one when a slot frees', () => {
    const { policy } = policyOn({ agents: 2 });
    for (const id of ['a', 'b', 'c']) policy.enqueue(agent(id, 0));
    expect(admittedIds(policy)).toEqual(['a', 'b']);
    expect(admittedIds(policy)).toEqual([]);
    policy.releaseAgent();
    expect(admittedIds(policy)).toEqual(['c']);
    expect(policy.stats()).toMatchObject({ running: 2, queued: 0 });
  });

  it('admits a deeper agent before shallower ones queued earlier (deeper-first, the default)', () => {
    const { policy } = policyOn({ agents: 1 });
    policy.enqueue(agent('holder', 0));
    expect(admittedIds(policy)).toEqual(['holder']);
    policy.enqueue(agent('root-2', 0));
    policy.enqueue(agent('child', 1));
    const { position } = policy.enqueue(agent('grandchild', 2));
    expect(position).toBe(1);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      policy.releaseAgent();
      order.push(...admittedIds(policy));
    }
    expect(order).toEqual(['grandchild', 'child', 'root-2']);
  });

  it('keeps arrival order with queue.order fifo', () => {
    const { policy } = policyOn({ agents: 1, queue: { order: 'fifo' } });
    policy.enqueue(agent('holder', 0));
    admittedIds(policy);
    policy.enqueue(agent('first', 0));
    policy.enqueue(agent('deep', 3));
    policy.releaseAgent();
    expect(admittedIds(policy)).toEqual(['first']);
  });

  it('caps requests in flight per provider and overall, independently of other providers', () => {
    const { policy } = policyOn({ modelRequests: 3, providers: { p: { concurrent: 1 } } });
    for (const id of ['p1', 'p2']) policy.enqueue(request(id, 'p'));
    for (const id of ['q1', 'q2', 'q3']) policy.enqueue(request(id, 'q'));
    expect(admittedIds(policy)).toEqual(['p1', 'q1', 'q2']);
    // p's slot frees: its next request goes; q3 still waits for the overall cap.
    policy.releaseModel({ provider: 'p', tokens: 10 });
    expect(admittedIds(policy)).toEqual(['p2']);
    expect(policy.stats()).toMatchObject({ queued: 1, inFlight: { p: 1, q: 2 } });
  });

  it('gives requests of a provider slots one spacing apart by its requestsPerMinute, with no burst', () => {
    const { clock, policy } = policyOn({ providers: { p: { requestsPerMinute: 6_000 } } });
    for (const id of ['a', 'b', 'c']) policy.enqueue(request(id, 'p'));
    const first = policy.admit();
    expect(first.admitted.map((t) => [t.agentId, t.sendAt])).toEqual([['a', 0]]);
    // b is admitted a little ahead of its slot (10 ms and a 1 % margin), so its grant can cross in time.
    const wakeAt = first.wakeAt ?? Number.NaN;
    expect(wakeAt).toBeGreaterThan(5);
    expect(wakeAt).toBeLessThan(10.1);
    clock.now = wakeAt - 0.5;
    expect(admittedIds(policy)).toEqual([]);
    clock.now = wakeAt;
    const second = policy.admit().admitted;
    expect(second.map((t) => t.agentId)).toEqual(['b']);
    expect(second[0]?.sendAt).toBeCloseTo(10.1, 6);
  });

  it('paces a provider slower after it refused a request (a limit set too high)', () => {
    const { clock, policy } = policyOn({ providers: { p: { requestsPerMinute: 6_000 } } });
    policy.enqueue(request('a', 'p'));
    admittedIds(policy);
    for (const at of [0, 60, 120]) {
      clock.now = at;
      policy.pause('p', 5); // refused again and again: the limit is too high
    }
    clock.now = 200;
    for (const id of ['b', 'c', 'd']) policy.enqueue(request(id, 'p'));
    const sendAt: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { admitted, wakeAt } = policy.admit();
      sendAt.push(...admitted.map((ticket) => ticket.sendAt ?? Number.NaN));
      clock.now = wakeAt ?? clock.now;
    }
    // b goes now (its slot restarts the schedule); c and d a backed-off spacing apart.
    expect((sendAt[2] ?? 0) - (sendAt[1] ?? 0)).toBeCloseTo(10.1 / 0.95, 2);
  });

  it('charges estimated tokens per minute and corrects them by the usage reported', () => {
    const { clock, policy } = policyOn({ providers: { p: { tokensPerMinute: 6_000 } } });
    // A second's worth (100 tokens) may go at once.
    policy.enqueue(request('a', 'p', 100));
    policy.enqueue(request('b', 'p', 50));
    expect(admittedIds(policy)).toEqual(['a']);
    // The response reported 40 tokens: 60 come back, enough for b.
    policy.releaseModel({ provider: 'p', tokens: 100 }, 40);
    expect(admittedIds(policy)).toEqual(['b']);
    policy.releaseModel({ provider: 'p', tokens: 50 }, 250); // 200 more than estimated: in debt
    policy.enqueue(request('c', 'p', 10));
    const blocked = policy.admit();
    expect(blocked.admitted).toEqual([]);
    clock.now = blocked.wakeAt ?? Number.NaN;
    expect(admittedIds(policy)).toEqual(['c']);
  });

  it('pauses every request of a provider after a retry-after, not other providers', () => {
    const { clock, policy } = policyOn({ providers: { p: { concurrent: 8 }, q: { concurrent: 8 } } });
    policy.pause('p', 500);
    policy.enqueue(request('a', 'p'));
    policy.enqueue(request('b', 'q'));
    const during = policy.admit();
    expect(during.admitted.map((t) => t.agentId)).toEqual(['b']);
    expect(during.wakeAt).toBe(500);
    clock.now = 500;
    expect(admittedIds(policy)).toEqual(['a']);
    expect(policy.stats().throttledMs).toBe(500);
  });

  it('counts overlapping pauses once in throttledMs', () => {
    const { clock, policy } = policyOn({ providers: { p: {} } });
    policy.pause('p', 1_000);
    clock.now = 400;
    policy.pause('p', 1_000); // until 1400: 400 more
    policy.pause('p', 100); // inside the pause already
    expect(policy.stats().throttledMs).toBe(1_400);
  });

  it('is full at queue.max and withdraws tickets whose callers gave up', () => {
    const { policy } = policyOn({ agents: 1, queue: { max: 2 } });
    const { ticket } = policy.enqueue(agent('a', 0));
    policy.enqueue(agent('b', 0));
    expect(policy.full).toBe(true);
    policy.withdraw(ticket);
    expect(policy.full).toBe(false);
    expect(admittedIds(policy)).toEqual(['b']);
  });

  it('admits a model request at once only when nothing waits, the provider is not paced and it fits', () => {
    const { policy } = policyOn({ providers: { p: { concurrent: 1 }, paced: { requestsPerMinute: 60 } } });
    expect(policy.admitNow(request('a', 'p'))).toBe(true);
    expect(policy.stats().inFlight).toMatchObject({ p: 1 });
    expect(policy.admitNow(request('b', 'p'))).toBe(false); // at the limit
    expect(policy.admitNow(request('c', 'paced'))).toBe(false); // its slot matters: it asks
    policy.releaseModel({ provider: 'p', tokens: 0 });
    policy.enqueue(agent('queued', 0));
    expect(policy.admitNow(request('d', 'p'))).toBe(false); // something waits: no overtaking
    expect(policy.stats()).toMatchObject({ queued: 1, inFlight: { p: 0 } });
  });

  it('governs only what a limit names', () => {
    const { policy } = policyOn({ agents: 4, providers: { p: { concurrent: 1 } } });
    expect(policy.governs('agent')).toBe(true);
    expect(policy.governs('model-request', 'p')).toBe(true);
    expect(policy.governs('model-request', 'q')).toBe(false);
    expect(policyOn({}).policy.governs('agent')).toBe(false);
  });
});
