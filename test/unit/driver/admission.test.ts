/** A driver's side of admission: when a paced request is sent, and what it does with a grant that came too late. */
import { describe, expect, it, vi } from 'vitest';
import { epochNow } from '../../../src/clock.js';
import { admitted } from '../../../src/driver/admission.js';
import { PaceCell, SEND_SLACK } from '../../../src/scheduler/pace-cell.js';
import { LOCAL_CLOCK } from '../../../src/wire/clock.js';
import type { DriverGateway } from '../../../src/wire/gateway.js';
import type { AdmitGrant, AdmitRequestWire, DriverPlan } from '../../../src/wire/protocol.js';

const plan = { admission: true, route: { provider: 'p', model: 'm' } } as unknown as DriverPlan;

/**
 * A gateway whose admit answers the given grants in turn (then null) and records what was asked. A
 * function is a grant made when it is asked for, on the clock of that moment.
 */
function gatewayAnswering(...grants: (AdmitGrant | null | (() => AdmitGrant))[]) {
  const asked: AdmitRequestWire[] = [];
  const host = {
    admit: async (request: AdmitRequestWire) => {
      asked.push(request);
      const next = grants.shift() ?? null;
      return typeof next === 'function' ? next() : next;
    },
  } as unknown as DriverGateway;
  return { host, asked };
}

const local = (at: number): AdmitGrant => ({ at, grantedAt: epochNow(), clock: LOCAL_CLOCK });
/** A grant whose slot is 10 ms after it is granted (made when asked for: on the test's clock). */
const slotSoon = () => local(epochNow() + 10);

/**
 * Runs `body` on fake timers (setTimeout and performance.now, which the epoch clock reads): a slot and
 * a sleep end exactly when the test advances time to them, so a test never depends on how late a busy
 * machine wakes a timer (a grant whose slot passed more than 3 ms ago is given back).
 */
async function onFakeTime(body: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  try {
    await body();
  } finally {
    vi.useRealTimers();
  }
}

/** Awaits `sent` while fake time runs on by `ms`. */
async function whileTimePasses<T>(ms: number, sent: Promise<T>): Promise<T> {
  await vi.advanceTimersByTimeAsync(ms);
  return sent;
}

async function admissionOf(host: DriverGateway) {
  const admission = await admitted(plan, host, () => 12, new AbortController().signal);
  if (admission === undefined || admission === 'aborted') throw new Error('not admitted');
  return admission;
}

describe('driver admission', () => {
  it('asks once and sends at once when the grant names no slot (an unpaced provider)', async () => {
    const { host, asked } = gatewayAnswering(null);
    await (await admissionOf(host)).atSlot();
    expect(asked).toEqual([{ provider: 'p', tokens: 12 }]);
  });

  it('gives a grant back and asks again when it arrived well after its slot (its thread was busy)', () =>
    onFakeTime(async () => {
      const { host, asked } = gatewayAnswering(local(epochNow() - 50), slotSoon);
      await whileTimePasses(10, (await admissionOf(host)).atSlot());
      expect(asked).toEqual([
        { provider: 'p', tokens: 12 },
        { provider: 'p', tokens: 12, givenBack: true },
      ]);
    }));

  it('gives back at most three late grants, then sends late', async () => {
    const late = () => local(epochNow() - 50);
    const { host, asked } = gatewayAnswering(late(), late(), late(), late(), late());
    await (await admissionOf(host)).atSlot();
    expect(asked).toHaveLength(4);
  });

  it("reads another process's grant relative to when it was granted, never against this clock", async () => {
    const long = { at: 1_000, grantedAt: 1_000, clock: 'elsewhere/1' };
    const { host, asked } = gatewayAnswering(long);
    await (await admissionOf(host)).atSlot();
    expect(asked).toHaveLength(1);
    const late = gatewayAnswering({ at: 900, grantedAt: 1_000, clock: 'elsewhere/1' });
    await (await admissionOf(late.host)).atSlot();
    expect(late.asked).toHaveLength(2);
  });

  it('asks again with the pause when the provider refused, and waits for the new slot', async () => {
    const { host, asked } = gatewayAnswering(null, null);
    await (await admissionOf(host)).retryGate(250);
    expect(asked[1]).toEqual({ provider: 'p', tokens: 12, retryAfterMs: 250 });
  });

  it('asks nothing when the plan governs nothing', async () => {
    const { host, asked } = gatewayAnswering();
    const ungoverned = { ...plan, admission: undefined } as unknown as DriverPlan;
    expect(await admitted(ungoverned, host, () => 0, new AbortController().signal)).toBeUndefined();
    expect(asked).toEqual([]);
  });
  it('takes its own slot from a shared schedule: it says so when it asks, and each request takes one', async () => {
    const cell = PaceCell.create(10, epochNow() - 100);
    const { host, asked } = gatewayAnswering(local(epochNow() + 1_000), local(epochNow() + 1_000));
    const shared = { ...plan, pace: cell.buffer } as DriverPlan;
    for (let i = 0; i < 2; i++) {
      const admission = await admitted(shared, host, () => 12, new AbortController().signal);
      if (admission === undefined || admission === 'aborted') throw new Error('not admitted');
      await admission.atSlot(); // the grant's slot (a second away) is only a hint: the cell's is now
    }
    expect(asked).toEqual([
      { provider: 'p', tokens: 12, claims: true },
      { provider: 'p', tokens: 12, claims: true },
    ]);
    expect(cell.claims).toBe(2);
  });

  it('waits for a spacing after a send that went late since its slot was taken, and records its own send', async () => {
    const spacing = 10;
    const cell = PaceCell.create(spacing, epochNow() - 200);
    const other = cell.tryClaim(epochNow(), 1);
    if (!('slot' in other)) throw new Error('the first request should have a slot');
    const lateSend = epochNow() + 30; // another driver's thread was busy: its request goes 30 ms late
    cell.sent(other.slot, lateSend);
    const shared = { ...plan, pace: cell.buffer } as DriverPlan;
    const admission = await admitted(shared, gatewayAnswering(null).host, () => 12, new AbortController().signal);
    if (admission === undefined || admission === 'aborted') throw new Error('not admitted');
    await admission.atSlot();
    const sentAt = epochNow();
    expect(sentAt).toBeGreaterThanOrEqual(lateSend + spacing * (1 - SEND_SLACK));
    expect(cell.clearAt(0)).toBeGreaterThanOrEqual(sentAt - 1 + spacing * (1 - SEND_SLACK)); // its send is recorded
  });

  it('paces a resend that was not admitted again (after a 5xx) without counting it as an admitted slot', async () => {
    const cell = PaceCell.create(10, epochNow() - 100);
    const shared = { ...plan, pace: cell.buffer } as DriverPlan;
    const { host, asked } = gatewayAnswering(null);
    const admission = await admitted(shared, host, () => 12, new AbortController().signal);
    if (admission === undefined || admission === 'aborted') throw new Error('not admitted');
    await admission.atSlot();
    const before = cell.nextAt;
    await admission.atSlot(); // the resend takes the next slot
    expect(cell.nextAt).toBeGreaterThan(before);
    expect(cell.claims).toBe(1);
    await admission.readmit(undefined); // admitted again (after a 429): its send is counted
    await admission.atSlot();
    expect(cell.claims).toBe(2);
    expect(asked).toHaveLength(2);
  });

  it("sends a resend at once when its grant's slot was used (the parent's grant is for one send)", () =>
    onFakeTime(async () => {
      const { host, asked } = gatewayAnswering(slotSoon);
      const admission = await admissionOf(host);
      await whileTimePasses(10, admission.atSlot());
      await vi.advanceTimersByTimeAsync(20);
      await admission.atSlot(); // its grant is now 20 ms 'late': no give-back, no asking
      expect(asked).toHaveLength(1);
    }));

  it("hands the adapter a write hook only for a shared schedule, which follows the request's socket write", async () => {
    const cell = PaceCell.create(10, epochNow() - 100);
    const paced = await admitted(
      { ...plan, pace: cell.buffer } as DriverPlan,
      gatewayAnswering(null).host,
      () => 1,
      new AbortController().signal,
    );
    const unpaced = await admissionOf(gatewayAnswering(null).host);
    if (paced === undefined || paced === 'aborted') throw new Error('not admitted');
    expect(unpaced.onWrite).toBeUndefined();
    const late = epochNow() + 50;
    paced.onWrite?.(late);
    // The cell keeps whole microseconds, and an epoch time in ms carries ~0.25 µs of float precision:
    // equal to within a few microseconds is exact here (3 digits failed on a half-microsecond rounding).
    expect(cell.nextAt).toBeCloseTo(late + 10 * (1 - SEND_SLACK), 2);
  });

  it('asks again after a refusal without waiting for a slot when the adapter sends at it (readmit)', async () => {
    const cell = PaceCell.create(10, epochNow() + 60_000); // no slot for a minute
    const { host, asked } = gatewayAnswering(null, null);
    const shared = { ...plan, pace: cell.buffer } as DriverPlan;
    const admission = await admitted(shared, host, () => 12, new AbortController().signal);
    if (admission === undefined || admission === 'aborted') throw new Error('not admitted');
    await admission.readmit(40);
    expect(asked[1]).toEqual({ provider: 'p', tokens: 12, claims: true, retryAfterMs: 40 });
    expect(cell.claims).toBe(0);
  });

  it('asks nothing for a request admitted ahead (a credit), and takes that credit once', async () => {
    const credit = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(credit, 0, 1);
    const { host, asked } = gatewayAnswering(null);
    const withCredit = { ...plan, credit: credit.buffer } as DriverPlan;
    for (let i = 0; i < 2; i++) {
      const admission = await admitted(withCredit, host, () => 12, new AbortController().signal);
      if (admission === undefined || admission === 'aborted') throw new Error('not admitted');
      await admission.atSlot();
    }
    expect(asked).toEqual([{ provider: 'p', tokens: 12 }]);
    expect(Atomics.load(credit, 0)).toBe(0);
  });
});
