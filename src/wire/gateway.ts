/**
 * The gateway: what the parent serves to each activation and a driver host calls (comlink over the
 * thread's link, or directly on the main thread), and `driverHostOver`, which turns its Reply
 * envelopes into the typed DriverGateway a driver uses. Every runner goes through driverHostOver, so
 * replies are validated the same way whether they crossed a thread or not.
 */
import * as Comlink from 'comlink';
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
  anyValue,
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
  /** Absent on gateways without proxied AI SDK models. */
  modelProxy?(call: unknown): Promise<Reply<unknown>>;
  /**
   * Present on a gateway that is itself another link's (a queue host's, whose parent is behind Redis):
   * the driver's comlink messages on `endpoint` are passed on as they are, and the answers passed back,
   * instead of being decoded, called here and encoded again.
   */
  relay?(endpoint: Comlink.Endpoint): void;
}

/**
 * The gateway's methods a driver host calls over a link (as comlink `rpc` frames), listed once.
 * `log` is not among them: event batches travel as one-way `log` frames.
 */
export const GATEWAY_METHODS = [
  'claimNext',
  'refreshView',
  'classify',
  'executeTool',
  'callFromCode',
  'endProgram',
  'runTools',
  'joinMessages',
  'endTurn',
  'admit',
  'modelProxy',
] as const satisfies readonly (keyof GatewayRemote)[];
export type GatewayMethod = (typeof GATEWAY_METHODS)[number];
const METHOD_NAMES: ReadonlySet<string> = new Set(GATEWAY_METHODS);

/**
 * The parent's gateway as a driver host sees it: comlink calls over an activation's link endpoint.
 * Each method's comlink proxy is taken on first use and kept. Reading `remote.executeTool` creates a
 * new proxy and registers it with comlink's FinalizationRegistry, which per call was allocation and GC
 * work for nothing; taking all of them up front would cost more than a short activation's few calls.
 * comlink's apply ignores `this`, so a taken proxy is called as it is. `log` is the caller's (a frame).
 */
export function remoteGateway(endpoint: Comlink.Endpoint, log: GatewayRemote['log']): GatewayRemote {
  const remote = Comlink.wrap<GatewayRemote>(endpoint) as unknown as Record<
    GatewayMethod,
    (...args: unknown[]) => Promise<Reply<unknown>>
  >;
  const taken = new Map<GatewayMethod, (...args: unknown[]) => Promise<Reply<unknown>>>();
  const call =
    (method: GatewayMethod) =>
    (...args: unknown[]): Promise<Reply<unknown>> => {
      let proxy = taken.get(method);
      if (!proxy) {
        proxy = remote[method];
        taken.set(method, proxy);
      }
      return proxy(...args);
    };
  const gateway = { log } as Record<string, unknown>;
  for (const method of GATEWAY_METHODS) gateway[method] = call(method);
  return gateway as unknown as GatewayRemote;
}

/**
 * Whether an `rpc` frame's message is a plain call of one gateway method (comlink's APPLY with a
 * one-name path and plain arguments). A parent that serves its gateway to another process checks
 * this first: comlink would also let the sender read or set any property path on the served object.
 */
export function isGatewayCall(message: unknown): boolean {
  const call = message as { type?: unknown; path?: unknown; argumentList?: unknown; id?: unknown } | null;
  if (typeof call !== 'object' || call === null || call.type !== 'APPLY' || typeof call.id !== 'string') return false;
  const { path, argumentList } = call;
  if (!Array.isArray(path) || path.length !== 1 || !METHOD_NAMES.has(path[0])) return false;
  return (
    Array.isArray(argumentList) &&
    argumentList.every((argument) => (argument as { type?: unknown } | null)?.type === 'RAW')
  );
}

/** Whether an `rpc` frame's message is comlink's answer to a call (a plain value or a thrown error). */
export function isGatewayAnswer(message: unknown): boolean {
  const answer = message as { type?: unknown; id?: unknown; name?: unknown } | null;
  if (typeof answer !== 'object' || answer === null || typeof answer.id !== 'string') return false;
  return answer.type === 'RAW' || (answer.type === 'HANDLER' && answer.name === 'throw');
}

const ADMITTED: Reply<unknown> = { ok: true, value: null };
const NO_PROXY: Reply<unknown> = {
  ok: false,
  error: { code: 'INVALID_CONFIG', message: 'the parent keeps no proxied AI SDK models' },
};

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
    modelProxy: (call) => guard('modelProxy', () => remote.modelProxy?.(call) ?? Promise.resolve(NO_PROXY), anyValue),
  };
}
