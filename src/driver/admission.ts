/**
 * A driver's side of admission (createBrood `limits`): a governed request (plan.admission) waits for
 * the parent's scheduler before it is made — one crossing per request, none at all otherwise — and
 * the adapter gets a retry gate for 429/503, which asks again with the announced pause. An
 * activation's first request may come admitted with its plan (plan.firstAdmitted): it asks nothing.
 *
 * A paced provider's grant names the request's slot. The parent grants a little ahead, so the request
 * is sent at its slot wherever the grant arrived from; a grant that arrives too late (its thread was
 * busy) is given back and asked for again rather than sent on top of the next slot's request — a
 * provider that allows no burst would refuse one of the two.
 */

import { epochNow } from '../clock.js';
import type { ModelRequest } from '../models/types.js';
import { PaceCell } from '../scheduler/pace-cell.js';
import type { Cancellation } from '../util/lazy-abort.js';
import { LOCAL_CLOCK } from '../wire/clock.js';
import type { DriverGateway } from '../wire/gateway.js';
import type { AdmitGrant, DriverPlan } from '../wire/protocol.js';

/**
 * How late after its slot a request may still be sent: a provider that allows no burst tolerates
 * some arrival jitter (half a spacing at 100 requests/s is 5 ms), and the way from here to its
 * door (the body, the socket) takes some of it.
 */
const LATE_MS = 3;
/** Late grants given back per request at most; then it is sent late (a refusal is handled anyway). */
const MAX_GIVEN_BACK = 3;
/** How far ahead of its slot a driver takes it from a shared schedule: a timer waits no less than 1 ms. */
const CLAIM_AHEAD_MS = 1;

export interface Admission {
  /**
   * Resolves when the admitted request should be sent (at its slot): awaited right before the send,
   * by the adapter when it can (ModelRequest.atSlot), so nothing runs between the slot and the write.
   */
  atSlot(): Promise<void>;
  /** A paced request was written to its socket at `at`: the shared schedule follows it (PaceCell.wrote). */
  onWrite?: (at: number) => void;
  /** After a 429/503: asks again with the announced pause (the adapter then awaits atSlot before resending). */
  readmit: NonNullable<ModelRequest['retryGate']>;
  /** readmit, then atSlot: for an adapter that does not await atSlot itself. */
  retryGate: NonNullable<ModelRequest['retryGate']>;
}

export interface AdmissionOptions {
  /** The activation's first request came admitted with its plan (plan.firstAdmitted): it asks nothing. */
  preAdmitted?: boolean;
  /** The adapter reports its socket writes (onWrite; brood's HTTP adapters): a send is out once written. */
  reportsWrites?: boolean;
}

export async function admitted(
  plan: DriverPlan,
  host: DriverGateway,
  estimate: () => number,
  signal: Cancellation,
  { preAdmitted = false, reportsWrites = false }: AdmissionOptions = {},
): Promise<Admission | undefined | 'aborted'> {
  if (plan.admission !== true || host.admit === undefined) return undefined;
  const admit = host.admit.bind(host);
  const provider = plan.route.provider;
  const cell = plan.pace === undefined ? undefined : new PaceCell(plan.pace);
  if (reportsWrites) cell?.expectWrites();
  const claims = cell === undefined ? {} : { claims: true };
  const ask = (more: { retryAfterMs?: number; givenBack?: true } = {}) =>
    untilAborted(admit({ provider, tokens: estimate(), ...claims, ...more }), signal);
  let grant = preAdmitted || takeCredit(plan) ? null : await ask();
  if (signal.aborted) return 'aborted';
  const atGrantedSlot = async (): Promise<void> => {
    let givenBack = 0;
    while (!signal.aborted) {
      const wait = waitFor(grant);
      if (wait === 'late' && givenBack < MAX_GIVEN_BACK) {
        givenBack += 1;
        grant = await ask({ givenBack: true });
      } else if (wait !== 'late' && wait > 0) {
        await sleep(wait); // and look again: a busy thread wakes late
      } else return;
    }
  };
  // The first send after an admission takes the slot the parent counted for it; a resend that was not
  // admitted again (after a 5xx or a network error) is paced too, but counted by nobody.
  let admittedSend = true;
  const atSlot = async (): Promise<void> => {
    const counted = admittedSend;
    admittedSend = false;
    if (cell !== undefined) return atOwnSlot(cell, signal, counted);
    if (counted) await atGrantedSlot(); // a grant's slot is for one send
  };
  const readmit = async (retryAfterMs: number | undefined): Promise<void> => {
    grant = await ask(retryAfterMs === undefined ? {} : { retryAfterMs });
    admittedSend = true;
  };
  return {
    ...(cell === undefined ? {} : { onWrite: (at: number) => cell.wrote(at) }),
    atSlot,
    readmit,
    retryGate: async (retryAfterMs) => {
      await readmit(retryAfterMs);
      await atSlot();
    },
  };
}

/**
 * Takes the request's own slot from the provider's shared schedule and waits for it; then records the
 * send, which the caller makes at once. A timer wakes a little late: the slot is taken up to
 * CLAIM_AHEAD_MS ahead, so the next one is not lost to it; a send since then that went late (its
 * thread was busy) pushed the schedule, and one not yet written may still go late: this one waits for
 * those too (PaceCell.clearAt).
 */
async function atOwnSlot(cell: PaceCell, signal: Cancellation, counted: boolean): Promise<void> {
  while (!signal.aborted) {
    const claim = cell.tryClaim(epochNow(), CLAIM_AHEAD_MS, counted);
    if ('retryIn' in claim) {
      await sleep(claim.retryIn);
      continue;
    }
    for (let now = epochNow(), clear = cell.clearAt(claim.slot, now); clear > now && !signal.aborted; ) {
      await sleep(clear - now);
      now = epochNow();
      clear = cell.clearAt(claim.slot, now);
    }
    cell.sent(claim.slot, epochNow());
    return;
  }
}

/** The parent admitted this request ahead (DriverPlan.credit): taken, so it is used once. */
function takeCredit(plan: DriverPlan): boolean {
  return plan.credit !== undefined && Atomics.compareExchange(new Int32Array(plan.credit), 0, 1, 0) === 1;
}

/** How long until the grant's slot (≤ 0: now), or 'late' when its slot passed more than LATE_MS ago. */
function waitFor(grant: AdmitGrant | null | undefined): number | 'late' {
  if (grant === null || grant === undefined) return 0;
  // Another process's clock is not ours: its grant is read relative to when it was granted.
  const now = grant.clock === LOCAL_CLOCK ? epochNow() : grant.grantedAt;
  const wait = grant.at - now;
  return wait < -LATE_MS ? 'late' : wait;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits for `work`, or less when `signal` aborts first (the caller checks the signal). */
function untilAborted<T>(work: Promise<T>, signal: Cancellation): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
