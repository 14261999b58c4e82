/**
 * The driver's view of its parent gateway. Both runners use `driverHostOver`, so replies are validated
 * the same way whether they crossed a thread (worker) or not (inline).
 */
import * as Comlink from 'comlink';
import { BroodError } from '../errors.js';
import type {
  CodeCallWire,
  DriverEvent,
  DriverHost,
  JoinedMessage,
  ToolBatchWire,
  ToolCallRequestWire,
  TurnReport,
} from '../driver/types.js';
import type { ToolResult } from '../types.js';
import {
  claimedMessage,
  codeCallReply,
  concurrencyClass,
  driverView,
  joinedMessages,
  nothing,
  toolResult,
  toolResults,
  unwrapReply,
  type Reply,
  type WireType,
} from './protocol.js';

/** The parent's gateway: every method answers with a Reply envelope (comlink would drop error codes). */
export interface GatewayRemote {
  claimNext(): Promise<Reply<unknown>>;
  refreshView(): Promise<Reply<unknown>>;
  classify(name: string, args: string): Promise<Reply<unknown>>;
  executeTool(call: ToolCallRequestWire): Promise<Reply<unknown>>;
  callFromCode(call: CodeCallWire): Promise<Reply<unknown>>;
  endProgram(program: string): Promise<Reply<unknown>>;
  runTools(batch: ToolBatchWire): Promise<Reply<unknown>>;
  log(events: DriverEvent[]): Promise<Reply<unknown>>;
  joinMessages(turn: number): Promise<Reply<unknown>>;
  endTurn(report: TurnReport): Promise<Reply<unknown>>;
}

type Guard = <T>(what: string, send: () => Promise<unknown>, value: WireType<T>) => Promise<T>;

const direct: Guard = async (what, send, value) => unwrapReply(await send(), value, what);

export function driverHostOver(remote: GatewayRemote, guard: Guard = direct): DriverHost {
  return {
    claimNext: () => guard('claimNext', () => remote.claimNext(), claimedMessage),
    refreshView: () => guard('refreshView', () => remote.refreshView(), driverView),
    classify: (name, args) => guard('classify', () => remote.classify(name, args), concurrencyClass),
    executeTool: (call) => guard('executeTool', () => remote.executeTool(call), toolResult) as Promise<ToolResult>,
    callFromCode: (call) => guard('callFromCode', () => remote.callFromCode(call), codeCallReply),
    endProgram: (program) => guard('endProgram', () => remote.endProgram(program), nothing),
    runTools: (batch) => guard('runTools', () => remote.runTools(batch), toolResults) as Promise<ToolResult[]>,
    log: (events) => guard('log', () => remote.log(events), nothing),
    joinMessages: (turn) =>
      guard('joinMessages', () => remote.joinMessages(turn), joinedMessages) as Promise<JoinedMessage[]>,
    endTurn: (report) => guard('endTurn', () => remote.endTurn(report), claimedMessage),
  };
}

/**
 * The driver host's side of one activation: comlink calls over the activation's link endpoint, and
 * one-way event logs as `log` frames (same link, so they stay ahead of the calls that follow them).
 * Comlink never rejects a call whose other end went away, so every call sits in a pending table that
 * is rejected as a whole when the link closes.
 */
export class GatewayClient {
  readonly host: DriverHost;
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
  };
}
