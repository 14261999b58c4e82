/**
 * The driver's view of its parent gateway. Both runners use `driverHostOver`, so replies are validated
 * the same way whether they crossed a thread (worker) or not (inline).
 */
import type { MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { z } from 'zod';
import { BroodError } from '../errors.js';
import type { DriverEvent, DriverHost, ToolCallRequestWire, TurnReport } from '../driver/types.js';
import type { ToolResult } from '../types.js';
import {
  claimedMessageSchema,
  concurrencyClassSchema,
  driverViewSchema,
  toolResultSchema,
  unwrapReply,
  type Reply,
} from './protocol.js';

/** The parent's gateway: every method answers with a Reply envelope (comlink would drop error codes). */
export interface GatewayRemote {
  claimNext(): Promise<Reply<unknown>>;
  refreshView(): Promise<Reply<unknown>>;
  classify(name: string, args: string): Promise<Reply<unknown>>;
  executeTool(call: ToolCallRequestWire): Promise<Reply<unknown>>;
  log(events: DriverEvent[]): Promise<Reply<unknown>>;
  endTurn(report: TurnReport): Promise<Reply<unknown>>;
}

type Guard = <T>(what: string, send: () => Promise<unknown>, schema: z.ZodType<T>) => Promise<T>;

const nothing = z.unknown().transform(() => undefined);

const direct: Guard = async (what, send, schema) => unwrapReply(await send(), schema, what);

export function driverHostOver(remote: GatewayRemote, guard: Guard = direct): DriverHost {
  return {
    claimNext: () => guard('claimNext', () => remote.claimNext(), claimedMessageSchema),
    refreshView: () => guard('refreshView', () => remote.refreshView(), driverViewSchema),
    classify: (name, args) => guard('classify', () => remote.classify(name, args), concurrencyClassSchema),
    executeTool: (call) => guard('executeTool', () => remote.executeTool(call), toolResultSchema) as Promise<ToolResult>,
    log: (events) => guard('log', () => remote.log(events), nothing),
    endTurn: (report) => guard('endTurn', () => remote.endTurn(report), claimedMessageSchema),
  };
}

/** The raw (non-comlink) message a driver posts to log events without waiting for a reply. */
export const LOG_MESSAGE = 'brood:log';

/**
 * The worker side of a driver's port. Comlink never rejects a call whose other end went away, so
 * every call sits in a pending table that is rejected as a whole when the port closes.
 */
export class GatewayClient {
  readonly host: DriverHost;
  private readonly remote: Comlink.Remote<GatewayRemote>;
  private readonly pending = new Set<(error: BroodError) => void>();
  private closed = false;

  constructor(port: MessagePort) {
    this.remote = Comlink.wrap<GatewayRemote>(nodeEndpoint(port));
    port.once('close', () => this.failPending("the parent closed this driver's port"));
    const host = driverHostOver(this.remote as unknown as GatewayRemote, (what, send, schema) => this.guard(what, send, schema));
    // Logging is the chattiest call and needs no answer: it goes one-way, in order with the calls.
    host.log = (events) => {
      if (this.closed) return Promise.reject(new BroodError('WORKER_CRASHED', "log: the parent side of this driver is gone"));
      port.postMessage({ [LOG_MESSAGE]: events });
      return Promise.resolve();
    };
    this.host = host;
  }

  /** Detaches comlink's listener so the port can close and the thread can go idle. */
  release(): void {
    this.remote[Comlink.releaseProxy]();
  }

  private guard<T>(what: string, send: () => Promise<unknown>, schema: z.ZodType<T>): Promise<T> {
    if (this.closed) return Promise.reject(new BroodError('WORKER_CRASHED', `${what}: the parent side of this driver is gone`));
    return new Promise<T>((resolve, reject) => {
      this.pending.add(reject);
      send()
        .then((raw) => resolve(unwrapReply(raw, schema, what)))
        .catch(reject)
        .finally(() => this.pending.delete(reject));
    });
  }

  private failPending(reason: string): void {
    this.closed = true;
    const error = new BroodError('WORKER_CRASHED', reason);
    for (const fail of this.pending) fail(error);
    this.pending.clear();
  }
}
