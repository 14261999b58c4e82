/**
 * The gateway: what the parent serves to each activation and a driver host calls (comlink over the
 * thread's link, or directly on the main thread), and `driverHostOver`, which turns its Reply
 * envelopes into the typed DriverGateway a driver uses. Every runner goes through driverHostOver, so
 * replies are validated the same way whether they crossed a thread or not.
 */
import type {
  AdmitRequestWire,
  CodeCallWire,
  DriverEvent,
  DriverGateway,
  JoinedMessage,
  ToolBatchWire,
  ToolCallRequestWire,
  TurnReport,
} from './contract.js';
import type { ToolResult } from '../types.js';
import {
  admitGrant,
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
  /** Absent on gateways that govern nothing (a driver only calls it when its plan says `admission`). */
  admit?(request: AdmitRequestWire): Promise<Reply<unknown>>;
}

const ADMITTED: Reply<unknown> = { ok: true, value: null };

type Guard = <T>(what: string, send: () => Promise<unknown>, value: WireType<T>) => Promise<T>;

const direct: Guard = async (what, send, value) => unwrapReply(await send(), value, what);

export function driverHostOver(remote: GatewayRemote, guard: Guard = direct): DriverGateway {
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
    admit: (request) => guard('admit', () => remote.admit?.(request) ?? Promise.resolve(ADMITTED), admitGrant),
  };
}
