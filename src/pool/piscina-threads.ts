/**
 * brood's use of piscina, in one place. What piscina still provides: starting worker threads with
 * `resourceLimits` and `workerData`, forwarding each thread's messages (the link hello) and errors to
 * the pool, the thread list, and tearing every thread down on destroy. What it does not do here:
 * run tasks. Activations are frames on each thread's link (src/wire/link.ts), so piscina's queue,
 * balancer and idle timer — which count only its own tasks — are switched off, and the one thing
 * missing from its API, "start one more thread", is done with a task no thread can take (spawnOne()).
 */
import type { ResourceLimits, Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';

export interface PiscinaThreadsOptions {
  filename: string;
  maxThreads: number;
  resourceLimits: ResourceLimits;
  workerData: unknown;
  /** Every message a thread posts to its parent port (the link hello among them). */
  onMessage(message: unknown): void;
  /** A thread died with an error (piscina reports it for every such thread, before the worker's own listeners). */
  onError(error: unknown): void;
}

export class PiscinaThreads {
  private readonly pool: Piscina;

  constructor(options: PiscinaThreadsOptions) {
    this.pool = new Piscina({
      filename: options.filename,
      // Nothing starts here: creating a runtime costs no thread whatever the pool size.
      minThreads: 0,
      maxThreads: options.maxThreads,
      // Piscina's idle timer counts its own tasks, and a thread never has one: it would end threads
      // that are running drivers. The thread group releases idle threads itself.
      idleTimeout: Number.POSITIVE_INFINITY,
      atomics: 'disabled',
      maxQueue: Number.POSITIVE_INFINITY,
      resourceLimits: options.resourceLimits,
      workerData: options.workerData,
      // No task is ever placed: a task exists only to make piscina start a thread (spawnOne()).
      loadBalancer: (_task) => null,
    });
    this.pool.on('message', options.onMessage);
    this.pool.on('error', options.onError);
  }

  /** Threads started, booted or not. */
  get started(): number {
    return this.pool.threads.length;
  }

  worker(threadId: number): Worker | undefined {
    return this.pool.threads.find((candidate) => candidate.threadId === threadId);
  }

  /**
   * Piscina has no call that starts one thread; a task it cannot place (the balancer places none)
   * makes it start one. The task is aborted at once, which takes it out of piscina's queue: left
   * there, the new thread's first idle moment would make piscina start every missing thread for it.
   */
  spawnOne(): void {
    const controller = new AbortController();
    this.pool.run(null, { signal: controller.signal }).catch(() => undefined);
    controller.abort();
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
