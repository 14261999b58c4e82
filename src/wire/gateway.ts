/**
 * The gateway's two sides, derived from its one declaration (GATEWAY in src/wire/protocol.ts): the
 * parent's implementation served as Reply envelopes (`serveTable`), the comlink calls a driver host
 * makes over an activation's link endpoint (`remoteGateway`), and `driverHostOver`, which turns the
 * envelopes back into the typed DriverGateway a driver uses. Every runner goes through
 * driverHostOver, so replies are validated the same way whether they crossed a thread or not.
 */
import type * as Comlink from 'comlink';
import { decodeError } from '../errors.js';
import { ComlinkCaller } from './comlink-caller.js';

export { isGatewayAnswer } from './comlink-caller.js';

import {
  GATEWAY,
  type GatewayArgs,
  type GatewayCallName,
  type GatewayMethodName,
  type GatewayResult,
  type OptionalGatewayMethod,
} from './protocol.js';
import { type Reply, replyOf, unwrapReply } from './reply.js';
import type { WireType } from './wire-type.js';

type RequiredMethod = Exclude<GatewayMethodName, OptionalGatewayMethod>;

/** Method M with its declared arguments, as each side sees it: the driver's call, the served one, the parent's code. */
type Sides<M extends GatewayMethodName> = {
  driver: (this: DriverGateway, ...args: GatewayArgs<M>) => Promise<GatewayResult<M>>;
  served: (...args: GatewayArgs<M>) => Promise<Reply<unknown>>;
  implemented: (...args: GatewayArgs<M>) => GatewayResult<M> | Promise<GatewayResult<M>>;
};
/** Every method of the table as one side sees it; methods a parent may leave out are optional. */
type Over<Side extends keyof Sides<GatewayMethodName>> = { [M in RequiredMethod]: Sides<M>[Side] } & {
  [M in OptionalGatewayMethod]?: Sides<M>[Side];
};

/** The gateway as a driver calls it: typed answers, errors rethrown as BroodErrors with their codes. */
export type DriverGateway = { [M in GatewayMethodName]: Sides<M>['driver'] } & {
  /**
   * Resolves once everything logged so far has left this thread (worker transport, which batches
   * per tick). Absent where logs are delivered at once (inline).
   */
  sent?(): Promise<void>;
};

/** The parent's gateway as served: every method answers with a Reply envelope (comlink would drop error codes). */
export type GatewayRemote = Over<'served'> & {
  /**
   * Present on a gateway that is itself another link's (a queue host's, whose parent is behind Redis):
   * the driver's comlink messages on `endpoint` are passed on as they are, and the answers passed back,
   * instead of being decoded, called here and encoded again.
   */
  relay?(endpoint: Comlink.Endpoint): void;
};

/** What the parent implements: each method gets its arguments checked against the table, and answers plain values. */
export type GatewayImplementation = Over<'implemented'>;

const ALL_METHODS = Object.keys(GATEWAY) as GatewayMethodName[];

/**
 * The gateway's methods a driver host calls over a link (as comlink `rpc` frames): every method but
 * the one-way ones (`log`, whose event batches travel as `log` frames).
 */
export const GATEWAY_METHODS = ALL_METHODS.filter(
  (name): name is GatewayCallName => !(GATEWAY[name] as { oneWay?: true }).oneWay,
);
export type GatewayMethod = GatewayCallName;
const METHOD_NAMES: ReadonlySet<string> = new Set(GATEWAY_METHODS);

type AnyMethod = (...args: unknown[]) => unknown;

/** What one served table holds: its implementation, and the failure of a one-way call not yet reported. */
interface ServedState {
  readonly implementation: Record<string, AnyMethod | undefined>;
  readonly before: (() => void) | undefined;
  fault: unknown;
}
const STATE = Symbol('served table');
type Served = { readonly [STATE]: ServedState };

/**
 * The served methods live on one prototype per set of implemented methods (a parent implements one
 * or two such sets), so serving an activation allocates one small object instead of a closure per
 * method. An object made with Object.create over a served table serves the same calls.
 */
const prototypes = new Map<string, object>();
function servedPrototype(names: readonly GatewayMethodName[]): object {
  const key = names.join(',');
  let prototype = prototypes.get(key);
  if (prototype) return prototype;
  prototype = {};
  for (const name of names) {
    const args = GATEWAY[name].args;
    const oneWay = (GATEWAY[name] as { oneWay?: true }).oneWay === true;
    Object.defineProperty(prototype, name, {
      enumerable: true,
      value: function served(this: Served, ...raw: unknown[]): Promise<Reply<unknown>> {
        const state = this[STATE];
        const answer = replyOf(() => {
          if (state.fault !== undefined) throw state.fault;
          state.before?.();
          return state.implementation[name]?.(...args.parse(raw, name));
        });
        // A one-way call's failure has no reply to carry it: the table's next call fails with it instead.
        return oneWay ? answer.then((reply) => rememberFault(state, reply)) : answer;
      },
    });
  }
  prototypes.set(key, Object.freeze(prototype));
  return prototype;
}

function rememberFault(state: ServedState, reply: Reply<unknown>): Reply<unknown> {
  if (!reply.ok) state.fault ??= decodeError(reply.error);
  return reply;
}

/**
 * Serves a parent's implementation: each call's arguments are checked against their declaration
 * (the driver is not trusted to send well-formed data) and each answer is a Reply envelope, so error
 * codes survive the crossing. `before` runs first on every call (it may throw to refuse it). A
 * one-way call that failed (a protocol violation on a `log`) fails the table's next call.
 * Implementation methods are called as methods of `implementation`.
 */
export function serveTable(implementation: GatewayImplementation, before?: () => void): GatewayRemote {
  const methods = implementation as Record<string, AnyMethod | undefined>;
  const names = ALL_METHODS.filter((name) => methods[name] !== undefined);
  const served = Object.create(servedPrototype(names)) as Served;
  const state: ServedState = { implementation: methods, before, fault: undefined };
  Object.defineProperty(served, STATE, { value: state });
  return Object.freeze(served) as unknown as GatewayRemote;
}

/**
 * The parent's gateway as a driver host sees it: comlink calls over an activation's link endpoint
 * (ComlinkCaller: comlink's messages without comlink's proxies). `log` is the caller's (a frame). The
 * methods live on the class's prototype, made once (see below): a wide fan-out has thousands of these
 * alive, and a closure and context per method and activation were ~1 KB of each running child's
 * thread heap.
 */
class RemoteGateway {
  private readonly caller: ComlinkCaller;

  constructor(
    endpoint: Comlink.Endpoint,
    readonly log: GatewayRemote['log'],
  ) {
    this.caller = new ComlinkCaller(endpoint);
  }

  call(method: GatewayMethod, args: unknown[]): Promise<Reply<unknown>> {
    return this.caller.call(method, args) as Promise<Reply<unknown>>;
  }
}
for (const method of GATEWAY_METHODS) {
  Object.defineProperty(RemoteGateway.prototype, method, {
    value: function call(this: RemoteGateway, ...args: unknown[]) {
      return this.call(method, args);
    },
  });
}

/** The remote gateway of one activation (its methods are called as its methods, never detached). */
export function remoteGateway(endpoint: Comlink.Endpoint, log: GatewayRemote['log']): GatewayRemote {
  return new RemoteGateway(endpoint, log) as unknown as GatewayRemote;
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

/** What every call goes through (called as `guard.guard(...)`: an activation's client is its own guard). */
export interface CallGuard {
  guard<T>(what: string, send: () => Promise<unknown>, value: WireType<T>): Promise<T>;
}

const direct: CallGuard = {
  guard: async (what, send, value) => unwrapReply(await send(), value, what),
};

/**
 * The typed gateway over a served one: each answer is checked against the method's declared reply.
 * Its methods are on the class's prototype, made once, like RemoteGateway's; they stay writable, so a
 * host may put its own `log` (or `sent`) on an instance.
 */
class DriverHost {
  constructor(
    readonly served: Record<string, AnyMethod | undefined>,
    readonly guarded: CallGuard,
  ) {}
}
for (const name of ALL_METHODS) {
  const reply: WireType<unknown> = GATEWAY[name].reply;
  const absent = (GATEWAY[name] as { absent?: { value: unknown } }).absent;
  // An optional method the parent left out answers its declared value without crossing.
  const answer = absent && { ok: true, value: absent.value };
  Object.defineProperty(DriverHost.prototype, name, {
    writable: true,
    configurable: true,
    value: function call(this: DriverHost, ...args: unknown[]) {
      const { served } = this;
      return this.guarded.guard(
        name,
        () => (served[name]?.(...args) as Promise<unknown>) ?? Promise.resolve(answer),
        reply,
      );
    },
  });
}

export function driverHostOver(remote: GatewayRemote, guard: CallGuard = direct): DriverGateway {
  return new DriverHost(remote as unknown as Record<string, AnyMethod | undefined>, guard) as unknown as DriverGateway;
}
