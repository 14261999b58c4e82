/**
 * A paced provider's schedule in shared memory (PaceCell) on a fake clock: drivers take their own
 * slots from it, the parent admits ahead of it and counts the requests that have not taken theirs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Pacer } from '../../../src/scheduler/buckets.js';
import { PaceCell, SEND_SLACK, WRITE_WAIT } from '../../../src/scheduler/pace-cell.js';
import { AdmissionPolicy, type TicketRequest } from '../../../src/scheduler/policy.js';

/** 6,000 a minute: a 10 ms spacing, and the 1 % margin. */
const SPACING = 10.1;

function slotOf(claim: { slot: number } | { retryIn: number }): number {
  if (!('slot' in claim)) throw new Error(`no slot: retry in ${claim.retryIn} ms`);
  return claim.slot;
}

describe('PaceCell', () => {
  it('gives whoever is ready first the next slot; the others wait for the one after', () => {
    const cell = PaceCell.create(SPACING, 0);
    expect(slotOf(cell.tryClaim(0, 1))).toBe(0);
    const early = cell.tryClaim(2, 1);
    expect(early).toEqual({ retryIn: expect.closeTo(SPACING - 2 - 1, 6) });
    // Taken up to 1 ms ahead (a timer waits no less): the slot is the schedule's, not the caller's now.
    expect(slotOf(cell.tryClaim(SPACING - 0.5, 1))).toBeCloseTo(SPACING, 6);
    expect(cell.claims).toBe(2);
  });

  it('restarts from a late request instead of bunching the slots it missed', () => {
    const cell = PaceCell.create(SPACING, 0);
    cell.tryClaim(0, 1);
    expect(slotOf(cell.tryClaim(100, 1))).toBeCloseTo(100 - 0.05 * SPACING, 6);
    expect(cell.nextAt).toBeCloseTo(100 - 0.05 * SPACING + SPACING, 6);
  });

  it('gives a slot to a request that waited exactly the retryIn it was told (no float rounding short of it)', () => {
    // fast-check's counterexample: 1.6499… + (11.245 − 1.6499… − 1) rounds to a hair before the slot's ahead window.
    const cell = PaceCell.create(SPACING, 0);
    const first = 1.6499039604431944;
    cell.tryClaim(first, 1);
    const told = cell.tryClaim(first, 1);
    if (!('retryIn' in told)) throw new Error('the second request should wait');
    expect(cell.tryClaim(first + told.retryIn, 1)).toEqual({ slot: expect.any(Number) });
  });

  it('never lets two requests go closer than a spacing less the catch-up, however they arrive', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 25, noNaN: true }), { minLength: 2, maxLength: 200 }), (delays) => {
        const cell = PaceCell.create(SPACING, 0);
        let now = 0;
        const sent: number[] = [];
        for (const delay of delays) {
          now += delay;
          const claim = cell.tryClaim(now, 1);
          if ('retryIn' in claim) {
            now += claim.retryIn;
            sent.push(slotOf(cell.tryClaim(now, 1)));
          } else sent.push(claim.slot);
        }
        for (let i = 1; i < sent.length; i++)
          expect((sent[i] ?? 0) - (sent[i - 1] ?? 0)).toBeGreaterThanOrEqual(0.95 * SPACING - 1e-3); // whole microseconds
      }),
    );
  });

  it('follows a send that went late: the next slot moves with it, as the provider reads it', () => {
    const cell = PaceCell.create(SPACING, 0);
    cell.sent(slotOf(cell.tryClaim(0, 1)), 30); // its thread was busy: 30 ms after its slot
    expect(cell.nextAt).toBeCloseTo(30 + SPACING * (1 - SEND_SLACK), 3);
    expect(cell.tryClaim(30, 1)).toEqual({ retryIn: expect.closeTo(SPACING * (1 - SEND_SLACK) - 1, 3) });
  });

  it('keeps the schedule for a send within the slack of its slot', () => {
    const cell = PaceCell.create(SPACING, 0);
    cell.sent(slotOf(cell.tryClaim(0, 1)), SPACING * SEND_SLACK * 0.9);
    expect(cell.nextAt).toBeCloseTo(SPACING, 3);
  });

  it('holds a slot taken before an earlier send went late until a spacing after that send', () => {
    const cell = PaceCell.create(SPACING, 0);
    const first = slotOf(cell.tryClaim(0, 1));
    const second = slotOf(cell.tryClaim(SPACING - 0.5, 1)); // taken ahead, while the first had not gone yet
    expect(cell.clearAt(second)).toBeCloseTo(second, 3);
    cell.sent(first, 8);
    expect(cell.clearAt(second)).toBeCloseTo(8 + SPACING * (1 - SEND_SLACK), 3);
    // An on-time send holds nothing back.
    expect(PaceCell.create(SPACING, 0).clearAt(5)).toBe(5);
  });

  it('never lets two sends go closer than a spacing less the slack, however late their threads are', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0, max: 25, noNaN: true }), fc.double({ min: 0, max: 40, noNaN: true })), {
          minLength: 2,
          maxLength: 100,
        }),
        (requests) => {
          const cell = PaceCell.create(SPACING, 0);
          let now = 0;
          const sends: number[] = [];
          for (const [delay, lateness] of requests) {
            now += delay;
            let claim = cell.tryClaim(now, 1);
            if ('retryIn' in claim) {
              now += claim.retryIn;
              claim = cell.tryClaim(now, 1);
            }
            // The driver wakes `lateness` after its slot (or later, when an earlier send held it back).
            const at = Math.max(slotOf(claim) + lateness, cell.clearAt(slotOf(claim)));
            cell.sent(slotOf(claim), at);
            sends.push(at);
            now = Math.max(now, at);
          }
          for (let i = 1; i < sends.length; i++)
            expect((sends[i] ?? 0) - (sends[i - 1] ?? 0)).toBeGreaterThanOrEqual(SPACING * (1 - SEND_SLACK) - 2e-3);
        },
      ),
    );
  });

  it('follows a write that went out later than the schedule allows (a connection was opened first)', () => {
    const cell = PaceCell.create(SPACING, 0);
    const first = slotOf(cell.tryClaim(0, 1));
    cell.sent(first, 0.5); // recorded on time when fetch was called…
    cell.wrote(6); // …but written to its socket 6 ms after its slot
    expect(cell.nextAt).toBeCloseTo(6 + SPACING * (1 - SEND_SLACK), 3);
    expect(cell.clearAt(SPACING)).toBeCloseTo(6 + SPACING * (1 - SEND_SLACK), 3);
    cell.wrote(SPACING * 2); // on time for the schedule now: it moves nothing more than a send would
    expect(cell.nextAt).toBeCloseTo(SPACING * 2 + SPACING * (1 - SEND_SLACK), 3);
  });

  it('holds the next send until one that passed its slot is written (its thread stalled in between)', () => {
    const cell = PaceCell.create(SPACING, 0);
    cell.sent(slotOf(cell.tryClaim(0, 1)), 0);
    cell.wrote(0.8); // the adapter reports its writes
    const stalled = slotOf(cell.tryClaim(SPACING - 0.5, 1));
    cell.sent(stalled, SPACING); // passed its slot; its thread stalls before the write
    const next = slotOf(cell.tryClaim(2 * SPACING - 0.5, 1));
    expect(cell.clearAt(next, next)).toBeCloseTo(next + 1, 3); // looks again shortly
    cell.wrote(SPACING + 14); // written 14 ms late
    expect(cell.clearAt(next, next + 4)).toBeCloseTo(SPACING + 14 + SPACING * (1 - SEND_SLACK), 3);
  });

  it('waits no more than WRITE_WAIT spacings for a write that never comes (its connection failed)', () => {
    const cell = PaceCell.create(SPACING, 0);
    cell.sent(slotOf(cell.tryClaim(0, 1)), 0);
    cell.wrote(0.8);
    cell.sent(slotOf(cell.tryClaim(SPACING - 0.5, 1)), SPACING);
    const next = slotOf(cell.tryClaim(2 * SPACING - 0.5, 1));
    expect(cell.clearAt(next, SPACING + WRITE_WAIT * SPACING - 0.1)).toBeGreaterThan(
      SPACING + WRITE_WAIT * SPACING - 0.1,
    );
    expect(cell.clearAt(next, SPACING + WRITE_WAIT * SPACING)).toBe(next);
  });

  it('holds the next send for the very first write once the adapter said it reports writes', () => {
    const cell = PaceCell.create(SPACING, 0);
    cell.expectWrites();
    cell.sent(slotOf(cell.tryClaim(0, 1)), 0); // no write heard yet: it stalls
    const next = slotOf(cell.tryClaim(SPACING - 0.5, 1));
    expect(cell.clearAt(next, next)).toBeCloseTo(next + 1, 3);
  });

  it('waits for no write while the adapter reports none', () => {
    const cell = PaceCell.create(SPACING, 0);
    cell.sent(slotOf(cell.tryClaim(0, 1)), 0);
    const next = slotOf(cell.tryClaim(SPACING - 0.5, 1));
    expect(cell.clearAt(next, next)).toBeCloseTo(next, 3);
  });

  it('keeps writes a spacing less the slack apart when threads stall up to WRITE_WAIT spacings before writing', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.double({ min: 0, max: 25, noNaN: true }),
            fc.double({ min: 0, max: (WRITE_WAIT - 0.1) * SPACING, noNaN: true }),
          ),
          { minLength: 2, maxLength: 60 },
        ),
        (requests) => {
          const cell = PaceCell.create(SPACING, 0);
          cell.expectWrites();
          let now = 0;
          let unwritten: number[] = []; // write times of sends the cell has not heard written yet
          const writes: number[] = [];
          const hear = () => {
            for (const at of unwritten.filter((at) => at <= now)) cell.wrote(at);
            unwritten = unwritten.filter((at) => at > now);
          };
          for (const [delay, stall] of requests) {
            now += delay;
            hear();
            let claim = cell.tryClaim(now, 1);
            while ('retryIn' in claim) {
              now += claim.retryIn;
              hear(); // a write heard meanwhile may move the schedule again
              claim = cell.tryClaim(now, 1);
            }
            const slot = claim.slot;
            now = Math.max(now, slot);
            for (hear(); cell.clearAt(slot, now) > now; hear())
              now = Math.min(cell.clearAt(slot, now), ...unwritten.filter((at) => at > now));
            cell.sent(slot, now);
            unwritten.push(now + stall);
            writes.push(now + stall);
          }
          writes.sort((a, b) => a - b);
          for (let i = 1; i < writes.length; i++)
            expect((writes[i] ?? 0) - (writes[i - 1] ?? 0)).toBeGreaterThanOrEqual(SPACING * (1 - SEND_SLACK) - 2e-3);
        },
      ),
    );
  });

  it('holds every slot until a retry-after has passed', () => {
    const cell = PaceCell.create(SPACING, 0);
    cell.tryClaim(0, 1);
    cell.holdUntil(250);
    expect(cell.tryClaim(SPACING, 1)).toEqual({ retryIn: expect.closeTo(250 - SPACING - 1, 6) });
    expect(slotOf(cell.tryClaim(250, 1))).toBe(250);
    cell.holdUntil(100); // earlier than the schedule already is: no change
    expect(cell.nextAt).toBeCloseTo(250 + SPACING, 6);
  });
});

describe('Pacer with drivers that take their own slots', () => {
  it('admits a spacing ahead and counts admitted requests that have not taken their slot yet', () => {
    const pacer = new Pacer(6_000, 0);
    expect(pacer.readyAt(0, true)).toBe(0);
    expect(pacer.reserve(0)).toBe(0);
    // One admitted, its slot not taken: the next may be admitted now, a spacing ahead of its slot.
    expect(pacer.readyAt(0, true)).toBe(0);
    expect(pacer.reserve(0)).toBeCloseTo(SPACING, 6);
    // Two waiting: the third is admitted a spacing before the third slot.
    expect(pacer.readyAt(0, true)).toBeCloseTo(SPACING, 6);
    slotOf(pacer.cell.tryClaim(0, 1));
    slotOf(pacer.cell.tryClaim(SPACING, 1));
    expect(pacer.readyAt(SPACING, true)).toBeCloseTo(SPACING, 6);
  });

  it('forgets a request released before it took its slot (cancelled): the next one has its place', () => {
    const pacer = new Pacer(6_000, 0);
    pacer.reserve(0);
    pacer.reserve(0);
    pacer.released(); // one of them ended without taking a slot
    expect(pacer.readyAt(0, true)).toBe(0);
    slotOf(pacer.cell.tryClaim(0, 1)); // the other one takes the first slot
    pacer.released();
    expect(pacer.readyAt(0, true)).toBe(0);
    expect(pacer.reserve(0)).toBeCloseTo(SPACING, 6);
  });
});

describe('AdmissionPolicy for drivers that take their own slots', () => {
  const request = (agentId: string): TicketRequest => ({
    kind: 'model-request',
    agentId,
    depth: 0,
    provider: 'p',
    tokens: 10,
    claimsOwnSlot: true,
  });

  it('shares the provider schedule and admits at its pace even while drivers are late to take their slots', () => {
    const clock = { now: 0 };
    const policy = new AdmissionPolicy({ providers: { p: { requestsPerMinute: 6_000 } } }, () => clock.now);
    const cell = new PaceCell(policy.paceCell('p') ?? new SharedArrayBuffer(0));
    for (const id of ['a', 'b', 'c', 'd']) policy.enqueue(request(id));
    const first = policy.admit();
    expect(first.admitted.map((ticket) => ticket.agentId)).toEqual(['a', 'b']);
    expect(first.wakeAt).toBeCloseTo(SPACING, 6);
    // Nobody took a slot yet (their threads are busy): one more is admitted at the pace, to take
    // whichever slot is free first.
    clock.now = SPACING;
    expect(policy.admit().admitted.map((ticket) => ticket.agentId)).toEqual(['c']);
    // One takes its slot late (the schedule restarts from it); the two others wait, and so does d.
    const taken = slotOf(cell.tryClaim(SPACING, 1));
    const { admitted, wakeAt } = policy.admit();
    expect(admitted).toEqual([]);
    expect(wakeAt).toBeCloseTo(taken + 2 * SPACING, 6);
    clock.now = wakeAt ?? Number.NaN;
    expect(policy.admit().admitted.map((ticket) => ticket.agentId)).toEqual(['d']);
    // A retry-after holds the shared schedule too: drivers already admitted wait for it.
    policy.pause('p', 100);
    expect(cell.tryClaim(clock.now, 1)).toEqual({ retryIn: expect.closeTo(100 - 1, 6) });
  });
});
