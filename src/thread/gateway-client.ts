/** A pool thread's side of the parent's gateway, one per activation (see GatewayClient). */
import type * as Comlink from 'comlink';
import { BroodError } from '../errors.js';
import { type CallGuard, type DriverGateway, driverHostOver, remoteGateway } from '../wire/gateway.js';
import type { DriverEvent, WireType } from '../wire/protocol.js';
import { type Reply, unwrapReply } from '../wire/reply.js';

/**
 * The driver host's side of one activation: comlink calls over the activation's link endpoint, and
 * one-way event logs as `log` frames (same link, so they stay ahead of the calls that follow them).
 * Comlink never rejects a call whose other end went away, so every call sits in a pending table that
 * is rejected as a whole when the link closes.
 */
export class GatewayClient implements CallGuard {
  readonly host: DriverGateway;
  /**
   * The calls in flight (usually one). An array, not a Set: a Set of one grows its table on every add
   * and shrinks it on every delete, allocation per call that a fan-out's thousands of drivers repeat.
   */
  private readonly pending: ((error: BroodError) => void)[] = [];
  private closedReason: string | undefined;

  constructor(endpoint: Comlink.Endpoint, sendLog: (events: DriverEvent[]) => void, sent?: () => Promise<void>) {
    // `log` never goes through comlink here: it is overridden below with the one-way frame.
    const remote = remoteGateway(endpoint, loggedElsewhere);
    const host = driverHostOver(remote, this);
    host.log = (events) => {
      if (this.closedReason !== undefined)
        return Promise.reject(new BroodError('WORKER_CRASHED', `log: ${this.closedReason}`));
      sendLog(events);
      return Promise.resolve();
    };
    if (sent) host.sent = sent;
    this.host = host;
  }

  /** The parent side of this driver is gone: pending and later calls reject with WORKER_CRASHED. */
  fail(reason: string): void {
    this.closedReason ??= reason;
    const error = new BroodError('WORKER_CRASHED', reason);
    for (const reject of this.pending.splice(0)) reject(error);
  }

  /** Every call of this activation's host (CallGuard): refused once the link is gone, else tracked until answered. */
  guard<T>(what: string, send: () => Promise<unknown>, value: WireType<T>): Promise<T> {
    if (this.closedReason !== undefined)
      return Promise.reject(new BroodError('WORKER_CRASHED', `${what}: ${this.closedReason}`));
    // One reaction for both outcomes (not then/catch/finally): a wide fan-out has thousands in flight.
    return new Promise<T>((resolve, reject) => {
      this.pending.push(reject);
      send().then(
        (raw) => {
          this.settled(reject);
          try {
            resolve(unwrapReply(raw, value, what));
          } catch (error) {
            reject(error);
          }
        },
        (error: unknown) => {
          this.settled(reject);
          reject(error);
        },
      );
    });
  }

  private settled(reject: (error: BroodError) => void): void {
    const at = this.pending.indexOf(reject);
    if (at < 0) return;
    const last = this.pending.pop() as (error: BroodError) => void;
    if (at < this.pending.length) this.pending[at] = last;
  }
}

/** The remote table's `log`, never called: the host's own `log` sends frames (one function for every activation). */
function loggedElsewhere(): Promise<Reply<undefined>> {
  return Promise.resolve({ ok: true, value: undefined });
}
