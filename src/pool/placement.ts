/**
 * Where an activation goes and when a thread starts: pure decisions over plain records, so the
 * policy is tested without threads (test/unit/pool/placement.test.ts). The thread group
 * (thread-group.ts) feeds them what piscina and the links report and carries out the answer.
 */

/** A linked thread as placement sees it. */
export interface ThreadLoad {
  readonly threadId: number;
  /** Live activations on the thread. */
  readonly load: number;
  readonly closed: boolean;
}

/** Least live activations wins (the first such thread on a tie): drivers are alike, so counts balance CPU. */
export function leastLoaded<T extends ThreadLoad>(threads: Iterable<T>): T | undefined {
  let best: T | undefined;
  for (const thread of threads) if (!thread.closed && (best === undefined || thread.load < best.load)) best = thread;
  return best;
}

export interface GrowthState {
  /** Threads piscina has started, booted or not. */
  readonly started: number;
  /** Threads that have said hello (their links are open). */
  readonly linked: readonly ThreadLoad[];
  /** Threads started together on the first need (one per core). */
  readonly warm: number;
  /** The most threads the group may run. */
  readonly max: number;
}

/**
 * How many threads to start now. The first need starts the warm set (booting in the background
 * while the first activation waits for the first of them), so a fan-out right after finds its
 * threads ready. Past the warm set one thread starts when every linked thread has a driver and none
 * is still booting: a burst on a large pool does not boot dozens of isolates at once on the cores
 * its drivers need.
 */
export function threadsToStart({ started, linked, warm, max }: GrowthState): number {
  if (started >= max) return 0;
  if (started < warm) return Math.min(warm, max) - started;
  if (started > linked.length) return 0; // one is still booting
  return linked.some((thread) => thread.load === 0 && !thread.closed) ? 0 : 1;
}

/** Whether an idle thread above the warm set may be ended (its isolate's memory goes with it). */
export function mayRetire(thread: ThreadLoad, linkedCount: number, warm: number): boolean {
  return thread.load === 0 && linkedCount > warm;
}
