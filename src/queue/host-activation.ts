/**
 * One activation on a host: the gateway the local worker pool serves to its driver, whose every call
 * travels to the parent as a `call` frame and resolves with the parent's `reply`; event batches go
 * one-way as `log` frames. Severed (the parent said `gone`, its channel went away, or the host hands
 * the activation back), every pending and later call answers WORKER_CRASHED, so the driver stops at
 * its next step without acting for the parent again.
 */
import type { GatewayRemote } from '../wire/gateway.js';
import type { Reply } from '../wire/protocol.js';
import type { Activation } from '../wire/runner.js';
import type { GatewayMethod, ToParent } from './frames.js';

/** How long a severed driver gets to stop by itself (its turn was cancelled) before it is stopped by force. */
const SEVER_GRACE_MS = 2_000;

export class HostActivation {
  private localActivation: Activation | undefined;
  /**
   * Cancels and a force stop that reached the host before its local pool took the activation (the
   * pool is made on a parent's first job, which takes a while): replayed on attach, never dropped.
   */
  private early: ((local: Activation) => void)[] = [];
  private readonly calls = new Map<number, (reply: unknown) => void>();
  private nextCall = 0;
  private severedReason: string | undefined;

  constructor(
    readonly parent: string,
    readonly a: number,
    private readonly cells: Int32Array[],
    private readonly send: (frame: ToParent) => void,
  ) {}

  get local(): Activation | undefined {
    return this.localActivation;
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

  get severed(): boolean {
    return this.severedReason !== undefined;
  }

  readonly gateway: GatewayRemote = {
    claimNext: () => this.call('claimNext', []),
    refreshView: () => this.call('refreshView', []),
    classify: (name, args) => this.call('classify', [name, args]),
    executeTool: (call) => this.call('executeTool', [call]),
    callFromCode: (call) => this.call('callFromCode', [call]),
    endProgram: (program) => this.call('endProgram', [program]),
    runTools: (batch) => this.call('runTools', [batch]),
    joinMessages: (turn) => this.call('joinMessages', [turn]),
    endTurn: (report) => this.call('endTurn', [report]),
    admit: (request) => this.call('admit', [request]),
    log: (events) => {
      if (!this.severed) this.send({ k: 'log', a: this.a, events });
      return Promise.resolve({ ok: true, value: undefined });
    },
  };

  reply(id: number, reply: unknown): void {
    const resolve = this.calls.get(id);
    this.calls.delete(id);
    resolve?.(reply);
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
    for (const resolve of this.calls.values()) resolve(answer);
    this.calls.clear();
    const local = this.localActivation;
    if (!local) return;
    local.cancel();
    const timer = setTimeout(() => local.forceStop(`the activation was severed: ${reason}`), SEVER_GRACE_MS);
    timer.unref();
    void local.done.then(() => clearTimeout(timer));
  }

  private call(method: GatewayMethod, args: unknown[]): Promise<Reply<unknown>> {
    if (this.severed) return Promise.resolve(this.severedReply());
    return new Promise((resolve) => {
      this.nextCall += 1;
      this.calls.set(this.nextCall, resolve as (reply: unknown) => void);
      this.send({ k: 'call', a: this.a, id: this.nextCall, m: method, args });
    });
  }

  private severedReply(): Reply<unknown> {
    return {
      ok: false,
      error: { code: 'WORKER_CRASHED', message: `this host no longer runs the activation: ${this.severedReason}` },
    };
  }
}
