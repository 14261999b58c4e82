/**
 * The parent ends an activation when it answers the driver's endTurn with "nothing left to claim"
 * while a thread-mate holds the thread, not when the thread's `end` frame arrives: after that answer
 * the driver only returns, so the `end` frame adds nothing the parent needs, and on a busy thread the
 * answer waits behind the thread-mate's synchronous work (a model step's CPU) before the driver can
 * send it — measured 7.7 ms on average in the CPU fan-out at P = 8, all the while holding the child's
 * slot of maxParallelToolCalls and its place in its thread's load, so the next child started late,
 * and on the other thread (CPU fan-out P = 8: 1.13× → 1.05–1.08× the floor). The end waits
 * for the next immediate, by when comlink has posted the answer (its reply goes out as microtasks),
 * so releasing the activation's endpoint cannot drop it; the late `end` frame is then ignored like
 * any frame of an activation already settled. Quarantined activations keep the thread's word: their
 * thread is destroyed when they end.
 */
import type { GatewayRemote } from '../wire/gateway.js';
import { GATEWAY, type GatewayMethodName } from '../wire/protocol.js';

type Method = (...args: unknown[]) => unknown;

/**
 * A gateway passed through but for endTurn. Its methods are the class's (one wrapper object per
 * activation, no closure per method); a method the inner gateway leaves out fails when called, as
 * it would have on the inner one. A relaying gateway is served as itself (see serveGateway).
 */
class EndsAtLastTurn {
  constructor(
    private readonly inner: GatewayRemote,
    private readonly activation: EndsItself,
  ) {}

  async endTurn(report: Parameters<GatewayRemote['endTurn']>[0]): ReturnType<GatewayRemote['endTurn']> {
    const answer = await this.inner.endTurn(report);
    if (answer.ok && answer.value === null) setImmediate(endNow, this.activation);
    return answer;
  }
}

/** The activation a wrapped gateway belongs to. */
export interface EndsItself {
  endAtLastTurn(): void;
}

function endNow(activation: EndsItself): void {
  activation.endAtLastTurn();
}

for (const name of Object.keys(GATEWAY) as GatewayMethodName[]) {
  if (name === 'endTurn') continue;
  Object.defineProperty(EndsAtLastTurn.prototype, name, {
    value: function passThrough(this: { inner: Record<string, Method | undefined> }, ...args: unknown[]) {
      return (this.inner[name] as Method)(...args);
    },
  });
}

export function endsAtLastTurn(gateway: GatewayRemote, activation: EndsItself): GatewayRemote {
  if (gateway.relay) return gateway; // its endTurn never reaches this side's table: it is relayed as it is
  return new EndsAtLastTurn(gateway, activation) as unknown as GatewayRemote;
}
