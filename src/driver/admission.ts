/**
 * A driver's side of admission (createBrood `limits`): a governed request (plan.admission) waits for
 * the parent's scheduler before it is made — one crossing per request, none at all otherwise — and
 * the adapter gets a retry gate for 429/503, which asks again with the announced pause.
 */
import type { ModelRequest } from '../models/types.js';
import type { DriverGateway, DriverPlan } from '../wire/contract.js';

export async function admitted(
  plan: DriverPlan,
  host: DriverGateway,
  estimate: () => number,
  signal: AbortSignal,
): Promise<ModelRequest['retryGate'] | 'aborted'> {
  const { admit } = host;
  if (plan.admission !== true || admit === undefined) return undefined;
  const provider = plan.route.provider;
  const tokens = estimate();
  await untilAborted(admit({ provider, tokens }), signal);
  if (signal.aborted) return 'aborted';
  return (retryAfterMs) =>
    untilAborted(admit({ provider, tokens, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) }), signal);
}

/** Waits for `work`, or less when `signal` aborts first (the caller checks the signal). */
function untilAborted(work: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
