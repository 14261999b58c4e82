/**
 * One piscina pool and the links of its threads. Piscina owns the threads' lives (start, resource
 * limits, destroy); activations travel on the links, never as piscina tasks. Threads start on demand,
 * never with the pool (see grow()), and threads above the warm set go again once idle. Each activation
 * goes to the least-loaded linked thread; activations that arrive before any thread has booted wait
 * here, so thread boot overlaps the parent's setup work.
 */
import { MessagePort, type ResourceLimits, type Worker } from 'node:worker_threads';
import type { ModelProviderConfig } from '../models/types.js';
import { LINK_HELLO } from '../wire/frames.js';
import { portCarrier } from '../wire/port-carrier.js';
import type { DriverPlan } from '../wire/protocol.js';
import { PiscinaThreads } from './piscina-threads.js';
import { leastLoaded, mayRetire, threadsToStart } from './placement.js';
import { type PlacedActivation, ThreadLink } from './thread-link.js';

export interface ThreadGroupOptions {
  filename: string;
  /** The most threads this group runs at once. */
  threads: number;
  /** Threads started together on the first need (one per core); the rest start as load requires. */
  warm: number;
  models: readonly ModelProviderConfig[];
  idleTimeoutMs: number;
  resourceLimits: ResourceLimits;
  board: SharedArrayBuffer;
  /** A linked thread died (or was recycled); `cause` describes how. */
  died(thread: ThreadLink, cause: unknown): void;
  /** Placed on a thread (now, or once one has booted). */
  placed(entry: PlacedActivation, thread: ThreadLink): void;
  /** Overrides the links' mid-tick exchange slice (src/wire/link.ts SLICE_MS). */
  linkSliceMs?: number;
  /** A thread died while no activation ran on it (piscina's pool 'error'). */
  diagnostic(error: unknown): void;
}

export class ThreadGroup {
  private readonly pool: PiscinaThreads;
  private readonly links = new Map<number, ThreadLink>();
  /** Threads above the warm set that have gone idle, and the timers that release them. */
  private readonly retiring = new Map<ThreadLink, NodeJS.Timeout>();
  private waiting: { entry: PlacedActivation; plan: DriverPlan }[] = [];
  private closing = false;
  /** Errors of threads that died carrying activations: those activations' ends report them. */
  private readonly attributed = new WeakSet<object>();

  constructor(private readonly options: ThreadGroupOptions) {
    this.pool = new PiscinaThreads({
      filename: options.filename,
      maxThreads: options.threads,
      resourceLimits: options.resourceLimits,
      workerData: { models: options.models },
      onMessage: (message) => this.onHello(message),
      onError: (error) => this.poolError(error),
    });
  }

  place(entry: PlacedActivation, plan: DriverPlan): void {
    this.grow();
    const thread = this.leastLoaded();
    if (thread) {
      this.start(thread, entry, plan);
      return;
    }
    this.waiting.push({ entry, plan });
  }

  /** A waiting activation that ended before it was placed (its turn was cancelled, or the runtime closed). */
  forget(token: number): void {
    this.waiting = this.waiting.filter(({ entry }) => entry.token !== token);
  }

  thread(threadId: number): ThreadLink | undefined {
    return this.links.get(threadId);
  }

  get threads(): number {
    return this.pool.started;
  }

  async destroy(): Promise<PlacedActivation[]> {
    this.closing = true;
    const stranded = [
      ...this.waiting.map(({ entry }) => entry),
      ...[...this.links.values()].flatMap((thread) => [...thread.live.values()]),
    ];
    this.waiting = [];
    for (const timer of this.retiring.values()) clearTimeout(timer);
    this.retiring.clear();
    for (const thread of this.links.values()) thread.close();
    this.links.clear();
    await this.pool.destroy();
    return stranded;
  }

  private start(thread: ThreadLink, entry: PlacedActivation, plan: DriverPlan): void {
    thread.start(entry, plan);
    this.options.placed(entry, thread);
  }

  private leastLoaded(): ThreadLink | undefined {
    return leastLoaded(this.links.values());
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
    const worker = this.pool.worker(hello.threadId);
    const thread = new ThreadLink(
      hello.threadId,
      worker,
      portCarrier(hello.port),
      this.options.board,
      (closed) => this.linkClosed(closed, undefined),
      (idle) => this.retireLater(idle),
      this.options.linkSliceMs,
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
    // Piscina replaces no thread (minThreads 0): the activations it carried come back through place(),
    // which starts a replacement; activations still waiting for a first thread need one now.
    if (this.waiting.length > 0) this.grow();
  }

  /** Starts the threads placement asks for (placement.ts: the warm set first, then one at a time). */
  private grow(): void {
    // Every thread linked (a wide fan-out's common case, checked per placement): none can start, and
    // piscina's thread list is not copied to count them.
    if (this.closing || this.links.size >= this.options.threads) return;
    const count = threadsToStart({
      started: this.pool.started,
      linked: [...this.links.values()],
      warm: this.options.warm,
      max: this.options.threads,
    });
    for (let started = 0; started < count; started++) this.pool.spawnOne();
  }

  /** A thread above the warm set that stays idle for idleTimeoutMs is ended (its isolate's memory goes with it). */
  private retireLater(thread: ThreadLink): void {
    if (this.closing || this.links.get(thread.threadId) !== thread || this.links.size <= this.options.warm) return;
    clearTimeout(this.retiring.get(thread));
    const timer = setTimeout(() => {
      this.retiring.delete(thread);
      if (this.closing || this.links.get(thread.threadId) !== thread) return;
      if (!mayRetire(thread, this.links.size, this.options.warm)) return;
      // Unlinked first, so nothing is placed on it and its exit is no death (linkClosed ignores it).
      this.links.delete(thread.threadId);
      thread.close();
      void thread.worker?.terminate();
    }, this.options.idleTimeoutMs);
    timer.unref();
    this.retiring.set(thread, timer);
  }
}
