/** A pool thread's side of the parent's gateway, one per activation (see GatewayClient). */
import * as Comlink from 'comlink';
import { BroodError } from '../errors.js';
import type { DriverEvent, DriverGateway } from '../wire/contract.js';
import { driverHostOver, type GatewayRemote } from '../wire/gateway.js';
import { unwrapReply, type WireType } from '../wire/protocol.js';

/**
 * The driver host's side of one activation: comlink calls over the activation's link endpoint, and
 * one-way event logs as `log` frames (same link, so they stay ahead of the calls that follow them).
 * Comlink never rejects a call whose other end went away, so every call sits in a pending table that
 * is rejected as a whole when the link closes.
 */
export class GatewayClient {
  readonly host: DriverGateway;
  private readonly pending = new Set<(error: BroodError) => void>();
  private closedReason: string | undefined;

  constructor(endpoint: Comlink.Endpoint, sendLog: (events: DriverEvent[]) => void, sent?: () => Promise<void>) {
    const host = driverHostOver(
      methodsOf(Comlink.wrap<GatewayRemote>(endpoint) as unknown as GatewayRemote),
      (what, send, value) => this.guard(what, send, value),
    );
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
    for (const reject of this.pending) reject(error);
    this.pending.clear();
  }

  private guard<T>(what: string, send: () => Promise<unknown>, value: WireType<T>): Promise<T> {
    if (this.closedReason !== undefined)
      return Promise.reject(new BroodError('WORKER_CRASHED', `${what}: ${this.closedReason}`));
    return new Promise<T>((resolve, reject) => {
      this.pending.add(reject);
      send()
        .then((raw) => resolve(unwrapReply(raw, value, what)))
        .catch(reject)
        .finally(() => this.pending.delete(reject));
    });
  }
}

/**
 * Each method's comlink proxy, taken on first use and kept. Reading `remote.executeTool` creates a new
 * proxy and registers it with comlink's FinalizationRegistry, which per call was allocation and GC
 * work on the thread for nothing; taking all ten up front would cost more than a short activation's
 * few calls. comlink's apply ignores `this`, so a taken proxy is called as it is.
 */
function methodsOf(remote: GatewayRemote): GatewayRemote {
  const taken: Partial<GatewayRemote> = {};
  const take = <K extends keyof GatewayRemote>(name: K): GatewayRemote[K] => {
    taken[name] ??= remote[name];
    return taken[name] as GatewayRemote[K];
  };
  return {
    claimNext: () => take('claimNext')(),
    refreshView: () => take('refreshView')(),
    classify: (name, args) => take('classify')(name, args),
    executeTool: (call) => take('executeTool')(call),
    callFromCode: (call) => take('callFromCode')(call),
    endProgram: (program) => take('endProgram')(program),
    runTools: (batch) => take('runTools')(batch),
    log: (events) => take('log')(events),
    joinMessages: (turn) => take('joinMessages')(turn),
    endTurn: (report) => take('endTurn')(report),
    admit: (request) => (take('admit') as NonNullable<GatewayRemote['admit']>)(request),
  };
}
