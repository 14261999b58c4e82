/**
 * One piscina pool and the links of its threads. Piscina owns the threads' lives (start, resource
 * limits, replacement after a death, destroy); activations travel on the links, never as piscina
 * tasks. Each activation goes to the least-loaded linked thread; activations that arrive before any
 * thread has booted wait here, so pool boot overlaps the parent's setup work.
 */
import { MessagePort, type ResourceLimits, type Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { DriverPlan } from '../wire/contract.js';
import type { ModelProviderConfig } from '../models/types.js';
import { portCarrier } from '../wire/port-carrier.js';
import { LINK_HELLO } from '../wire/protocol.js';
import { ThreadLink, type PlacedActivation } from './thread-link.js';

export interface ThreadGroupOptions {
  filename: string;
  threads: number;
  models: readonly ModelProviderConfig[];
  idleTimeoutMs: number;
  resourceLimits: ResourceLimits;
  board: SharedArrayBuffer;
  /** A linked thread died (or was recycled); `cause` describes how. */
  died(thread: ThreadLink, cause: unknown): void;
  /** Placed on a thread (now, or once one has booted). */
  placed(entry: PlacedActivation, thread: ThreadLink): void;
  /** A thread died while no activation ran on it (piscina's pool 'error'). */
  diagnostic(error: unknown): void;
}

export class ThreadGroup {
  readonly pool: Piscina;
  private readonly links = new Map<number, ThreadLink>();
  private waiting: { entry: PlacedActivation; plan: DriverPlan }[] = [];
  private closing = false;
  /** Errors of threads that died carrying activations: those activations' ends report them. */
  private readonly attributed = new WeakSet<object>();

  constructor(private readonly options: ThreadGroupOptions) {
    this.pool = new Piscina({
      filename: options.filename,
      minThreads: options.threads,
      maxThreads: options.threads,
      idleTimeout: options.idleTimeoutMs,
      atomics: 'disabled',
      maxQueue: Number.POSITIVE_INFINITY,
      resourceLimits: options.resourceLimits,
      workerData: { models: options.models },
      // No task is ever placed: a task exists only to make piscina start a missing thread (wake()).
      loadBalancer: (_task) => null,
    });
    this.pool.on('message', (message: unknown) => this.onHello(message));
    this.pool.on('error', (error: unknown) => this.poolError(error));
  }

  place(entry: PlacedActivation, plan: DriverPlan): void {
    const thread = this.leastLoaded();
    if (thread) {
      this.start(thread, entry, plan);
      return;
    }
    this.waiting.push({ entry, plan });
    this.wake();
  }

  /** A waiting activation that ended before it was placed (a cancel cannot end it; a close can). */
  forget(token: number): void {
    this.waiting = this.waiting.filter(({ entry }) => entry.token !== token);
  }

  thread(threadId: number): ThreadLink | undefined {
    return this.links.get(threadId);
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  async destroy(): Promise<PlacedActivation[]> {
    this.closing = true;
    const stranded = [
      ...this.waiting.map(({ entry }) => entry),
      ...[...this.links.values()].flatMap((thread) => [...thread.live.values()]),
    ];
    this.waiting = [];
    for (const thread of this.links.values()) thread.close();
    this.links.clear();
    await this.pool.destroy();
    return stranded;
  }

  private start(thread: ThreadLink, entry: PlacedActivation, plan: DriverPlan): void {
    thread.start(entry, plan);
    this.options.placed(entry, thread);
  }

  /** Least live activations wins: drivers are alike, so counts balance CPU across threads. */
  private leastLoaded(): ThreadLink | undefined {
    let best: ThreadLink | undefined;
    for (const thread of this.links.values())
      if (!thread.closed && (best === undefined || thread.load < best.load)) best = thread;
    return best;
  }

  private onHello(message: unknown): void {
    const hello = (message as Record<string, unknown> | null)?.[LINK_HELLO] as
      | { threadId?: unknown; port?: unknown }
      | undefined;
    if (!hello || typeof hello.threadId !== 'number' || !(hello.port instanceof MessagePort)) return;
    if (this.closing) {
      hello.port.close();
      return;
    }
    const worker = this.pool.threads.find((candidate) => candidate.threadId === hello.threadId);
    const thread = new ThreadLink(hello.threadId, worker, portCarrier(hello.port), this.options.board, (closed) =>
      this.linkClosed(closed, undefined),
    );
    this.links.set(thread.threadId, thread);
    if (worker) this.watchExit(worker, thread);
    const waiting = this.waiting;
    this.waiting = [];
    for (const { entry, plan } of waiting) this.place(entry, plan);
  }

  /**
   * Piscina emits 'error' for every thread that dies with an error (activations are not its tasks),
   * from its own listener on the worker, before ours. Only a death no activation answers for (an
   * adapter's stray timer on an idle thread, a thread dying at boot) becomes a diagnostic; the worker
   * listener below has said which it was by the next turn of the loop.
   */
  private poolError(error: unknown): void {
    setImmediate(() => {
      if (typeof error === 'object' && error !== null && this.attributed.has(error)) return;
      this.options.diagnostic(error);
    });
  }

  private watchExit(worker: Worker, thread: ThreadLink): void {
    let cause: unknown;
    worker.once('error', (error) => {
      cause = error;
      if (thread.load > 0 && typeof error === 'object' && error !== null) this.attributed.add(error);
    });
    worker.once('exit', (code) => this.linkClosed(thread, cause ?? new Error(`worker exited with code: ${code}`)));
  }

  /** The exit event carries the cause; a link that closes first waits for it unless there is no worker to wait for. */
  private linkClosed(thread: ThreadLink, cause: unknown): void {
    if (cause === undefined && thread.worker !== undefined) return;
    if (this.links.get(thread.threadId) !== thread) return;
    this.links.delete(thread.threadId);
    thread.close();
    if (this.closing) return;
    this.options.died(thread, cause ?? new Error("the thread's link closed"));
    if (this.waiting.length > 0 || this.links.size === 0) this.wake();
  }

  /**
   * Piscina replaces a dead thread by itself, except after a thread died while booting; a task it
   * cannot place (the balancer places none) makes it start one whenever it runs short of threads.
   */
  private wake(): void {
    if (this.closing || this.pool.threads.length >= this.options.threads) return;
    this.pool.run(null).catch(() => undefined);
  }
}
