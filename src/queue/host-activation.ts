/**
 * One activation on a host: the gateway the local worker pool serves to its driver is the parent's.
 * The driver's comlink calls are relayed to the parent as they are (`rpc` frames on the link to that
 * parent, as between a pool thread and its parent) and the answers relayed back; called here (the
 * gateway's methods), they go the same way through comlink. Event batches go one-way as `log` frames. Severed (the parent said
 * `gone`, went silent, or the host hands the activation back), every pending and later call answers
 * WORKER_CRASHED, so the driver stops at its next step without acting for the parent again.
 */
import type { Endpoint } from 'comlink';
import { encodeError } from '../errors.js';
import type { ToParent } from '../wire/frames.js';
import { GATEWAY_METHODS, type GatewayMethod, type GatewayRemote, remoteGateway } from '../wire/gateway.js';
import type { Reply } from '../wire/reply.js';
import type { Activation } from '../wire/runner.js';

/** How long a severed driver gets to stop by itself (its turn was cancelled) before it is stopped by force. */
const SEVER_GRACE_MS = 2_000;

/** What an activation needs of its link to the parent. */
export interface ParentLinkPort {
  endpoint(a: number): Endpoint;
  send(frame: ToParent): void;
}

export class HostActivation {
  private localActivation: Activation | undefined;
  /**
   * Cancels and a force stop that reached the host before its local pool took the activation (the
   * pool is made on a parent's first job, which takes a while): replayed on attach, never dropped.
   */
  private early: ((local: Activation) => void)[] = [];
  /** Calls sent and not answered: answered WORKER_CRASHED at once when the activation is severed. */
  private readonly pending = new Set<(reply: Reply<unknown>) => void>();
  private severedReason: string | undefined;
  /** The local pool's endpoint of a relayed gateway, and the ids of the calls relayed and not answered. */
  private relayed: { toDriver: Endpoint; calls: Set<string> } | undefined;
  readonly gateway: GatewayRemote;

  constructor(
    readonly parent: string,
    readonly a: number,
    private readonly cells: Int32Array[],
    link: ParentLinkPort,
  ) {
    const toParent = link.endpoint(a);
    const remote = remoteGateway(toParent, (events) => {
      if (!this.severed) link.send({ kind: 'log', activation: a, events });
      return Promise.resolve({ ok: true, value: undefined });
    });
    const gateway: Record<string, unknown> = { log: remote.log };
    const calls = remote as unknown as Record<GatewayMethod, (...args: unknown[]) => Promise<Reply<unknown>>>;
    for (const method of GATEWAY_METHODS)
      gateway[method] = (...args: unknown[]) => this.call(() => calls[method](...args));
    gateway.relay = (toDriver: Endpoint) => this.relay(toDriver, toParent, link);
    this.gateway = gateway as unknown as GatewayRemote;
  }

  /**
   * Passes the driver's gateway calls (comlink messages from the local pool's link) to the parent as
   * they are, and the parent's answers back, without decoding and re-encoding either in this process.
   * Calls still unanswered are remembered, so a severed activation answers them WORKER_CRASHED.
   */
  private relay(toDriver: Endpoint, toParent: Endpoint, link: ParentLinkPort): void {
    this.relayed = { toDriver, calls: new Set() };
    const calls = this.relayed.calls;
    onMessage(toDriver, (data) => {
      const message = data as { id?: unknown; type?: unknown } | null;
      // Only calls cross (comlink's releases of a proxy the driver dropped have nobody to answer them).
      if (message?.type !== 'APPLY' || typeof message.id !== 'string') return;
      if (this.severed) return toDriver.postMessage({ id: message.id, type: 'RAW', value: this.severedReply() });
      calls.add(message.id);
      link.send({ kind: 'rpc', activation: this.a, message });
    });
    onMessage(toParent, (data) => {
      const answer = data as { id: string };
      if (calls.delete(answer.id)) toDriver.postMessage(answer);
    });
  }

  get local(): Activation | undefined {
    return this.localActivation;
  }

  get severed(): boolean {
    return this.severedReason !== undefined;
  }

  /** The local pool's activation of this plan: whatever the parent asked of it meanwhile applies now. */
  attach(local: Activation): void {
    this.localActivation = local;
    const early = this.early;
    this.early = [];
    for (const apply of early) apply(local);
  }

  cancel(turn: number | undefined): void {
    this.whenLocal((local) => local.cancel(turn));
  }

  forceStop(reason: string): void {
    this.whenLocal((local) => local.forceStop(reason));
  }

  private whenLocal(apply: (local: Activation) => void): void {
    if (this.localActivation) apply(this.localActivation);
    else this.early.push(apply);
  }

  /** The parent's current cell values (view versions, events flag), for the driver's threads to read. */
  setCells(values: readonly number[]): void {
    if (values.length !== this.cells.length) return;
    this.cells.forEach((cell, index) => {
      Atomics.store(cell, 0, values[index] ?? 0);
    });
  }

  sever(reason: string): void {
    if (this.severed) return;
    this.severedReason = reason;
    const answer = this.severedReply();
    for (const resolve of this.pending) resolve(answer);
    this.pending.clear();
    if (this.relayed) {
      const { toDriver, calls } = this.relayed;
      for (const id of calls) toDriver.postMessage({ id, type: 'RAW', value: answer });
      calls.clear();
    }
    const local = this.localActivation;
    if (!local) return;
    local.cancel();
    const timer = setTimeout(() => local.forceStop(`the activation was severed: ${reason}`), SEVER_GRACE_MS);
    timer.unref();
    void local.done.then(() => clearTimeout(timer));
  }

  private call(send: () => Promise<Reply<unknown>>): Promise<Reply<unknown>> {
    if (this.severed) return Promise.resolve(this.severedReply());
    return new Promise((resolve) => {
      const answer = (reply: Reply<unknown>): void => {
        if (this.pending.delete(answer)) resolve(reply);
      };
      this.pending.add(answer);
      send().then(answer, (error: unknown) => answer({ ok: false, error: encodeError(error) }));
    });
  }

  private severedReply(): Reply<unknown> {
    return {
      ok: false,
      error: { code: 'WORKER_CRASHED', message: `this host no longer runs the activation: ${this.severedReason}` },
    };
  }
}

function onMessage(endpoint: Endpoint, handle: (data: unknown) => void): void {
  endpoint.addEventListener('message', ((event: { data: unknown }) => handle(event.data)) as never);
}
