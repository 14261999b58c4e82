/** A provider's requestsPerMinute as a schedule of slots (Pacer), on a fake clock. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Pacer } from '../../../src/scheduler/buckets.js';

/** 6,000 a minute: a 10 ms spacing, and the 1 % margin. */
const SPACING = 10.1;
/** The schedule is kept in whole microseconds (src/scheduler/pace-cell.ts). */
const MICROSECOND = 1e-3;

describe('Pacer', () => {
  it('keeps its schedule when a request is admitted a little late: the next slot does not move', () => {
    const pacer = new Pacer(6_000, 0);
    expect(pacer.take(0)).toBe(0);
    expect(pacer.take(SPACING + 0.4)).toBe(SPACING + 0.4); // sent now, a little after its slot
    expect(pacer.take(2 * SPACING)).toBeCloseTo(2 * SPACING, 6);
  });

  it('restarts its schedule from now after a long gap: missed slots are not bunched into a burst', () => {
    const pacer = new Pacer(6_000, 0);
    pacer.take(0);
    expect(pacer.take(100)).toBe(100);
    const next = pacer.take(pacer.readyAt(100));
    expect(next - 100).toBeGreaterThanOrEqual(0.95 * SPACING - 1e-9);
  });

  it('never sends two requests closer than 95 % of a spacing, nor more than the rate over any run', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 30, noNaN: true }), { minLength: 2, maxLength: 200 }), (delays) => {
        const pacer = new Pacer(6_000, 0);
        let now = 0;
        const sent: number[] = [];
        for (const delay of delays) {
          now = pacer.readyAt(now) + delay;
          sent.push(pacer.take(now));
        }
        for (let i = 1; i < sent.length; i++) {
          expect((sent[i] ?? 0) - (sent[i - 1] ?? 0)).toBeGreaterThanOrEqual(0.95 * SPACING - MICROSECOND);
          // From the first send, request i goes no earlier than i spacings less one catch-up.
          expect((sent[i] ?? 0) - (sent[0] ?? 0)).toBeGreaterThanOrEqual(
            i * SPACING - 0.05 * SPACING - i * MICROSECOND,
          );
        }
      }),
    );
  });

  it('takes back a slot never used when no later one was taken: the next request has it', () => {
    const pacer = new Pacer(6_000, 0);
    pacer.take(0);
    const unsent = pacer.take(pacer.readyAt(0));
    expect(unsent).toBeCloseTo(SPACING, 6);
    pacer.giveBack(unsent);
    // 5 ms after the slot nothing was sent: the next request goes now, not a spacing later.
    expect(pacer.readyAt(SPACING + 5)).toBe(SPACING + 5);
    expect(pacer.take(SPACING + 5)).toBe(SPACING + 5);
    // A slot given back after a later one was taken is gone.
    const taken = pacer.take(pacer.readyAt(0));
    pacer.take(pacer.readyAt(0));
    pacer.giveBack(taken);
    expect(pacer.readyAt(0)).toBeGreaterThan(taken + SPACING / 2);
  });

  it('is admitted a little ahead of its slot and says when to send', () => {
    const pacer = new Pacer(6_000, 0);
    pacer.take(0);
    const admitAt = pacer.readyAt(0);
    expect(admitAt).toBeGreaterThan(0);
    expect(admitAt).toBeLessThan(SPACING);
    expect(pacer.take(admitAt)).toBeCloseTo(SPACING, 6);
  });

  it('holds a backed-off pace, then creeps back up to the configured rate (never past it)', () => {
    const pacer = new Pacer(6_000, 0);
    const configured = pacer.requestsPerMinute;
    for (const at of [0, 50, 100]) pacer.backOff(at);
    const slowed = pacer.requestsPerMinute;
    expect(slowed).toBeLessThan(configured);
    pacer.take(500); // within the hold
    expect(pacer.requestsPerMinute).toBe(slowed);
    pacer.take(2_000);
    expect(pacer.requestsPerMinute).toBeGreaterThan(slowed);
    for (let t = 3_000; t < 60_000; t += 250) pacer.take(t);
    expect(pacer.requestsPerMinute).toBeCloseTo(configured, 6);
  });

  it('backs off when refusals are frequent, not for a stall nor for a refusal now and then', () => {
    const pacer = new Pacer(6_000, 0);
    const configured = pacer.requestsPerMinute;
    pacer.backOff(0);
    pacer.backOff(5); // the same stall: requests it let through together
    pacer.backOff(300); // another one, 30 spacings later: jitter on the way, not a limit set too high
    expect(pacer.requestsPerMinute).toBe(configured);
    pacer.backOff(1_000);
    pacer.backOff(1_100);
    pacer.backOff(1_200); // three within 40 spacings: the limit is too high
    expect(pacer.requestsPerMinute).toBeCloseTo(configured * 0.95, 6);
    pacer.backOff(1_300); // frequent, but within 20 spacings of the last back-off
    expect(pacer.requestsPerMinute).toBeCloseTo(configured * 0.95, 6);
  });

  it('never backs off below half the limit', () => {
    const pacer = new Pacer(6_000, 0);
    const configured = pacer.requestsPerMinute;
    for (let t = 0; t <= 100_000; t += 100) pacer.backOff(t);
    expect(pacer.requestsPerMinute).toBeCloseTo(configured / 2, 6);
  });
});
