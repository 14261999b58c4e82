/**
 * Leak and load harness shared by test/reliability/leaks-load.test.ts (CI sizes) and
 * test/stress/ (on-demand sizes): many short delegations through brood.subagents.start from several
 * parents, measuring active resources, MessagePorts and heap growth with the session store's own
 * data excluded (CountingStore keeps headers and counts events, nothing else).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Agent, Brood, SessionEvent, SessionHeader, SessionStore } from '../../src/index.js';
import { createBrood, scriptedModels } from '../../src/index.js';
import { activeResources, waitOutRunnerTimer } from './active-resources.js';
import { route } from './route.js';

/** A SessionStore that keeps only headers and counts events (the store's data must not look like a leak). */
export class CountingStore implements SessionStore {
  readonly headers = new Map<string, SessionHeader>();
  events = 0;
  async create(header: SessionHeader): Promise<void> {
    this.headers.set(header.id, header);
  }
  async append(_id: string, events: SessionEvent[]): Promise<void> {
    this.events += events.length;
  }
  async flush(): Promise<void> {}
  async read(id: string): Promise<{ header: SessionHeader; events: SessionEvent[] }> {
    const header = this.headers.get(id);
    if (!header) throw Object.assign(new Error(`unknown session ${id}`), { code: 'NOT_RESUMABLE' });
    return { header, events: [] };
  }
  async list(): Promise<SessionHeader[]> {
    return [...this.headers.values()];
  }
}

/** A full, synchronous GC without needing node --expose-gc on the command line. */
export function forceGc(): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  gc();
}

export function heapUsed(): number {
  forceGc();
  return v8.getHeapStatistics().used_heap_size;
}

export interface LoadRig {
  brood: Brood;
  store: CountingStore;
  parents: Agent[];
  ends: () => number;
  /** One short delegation from `parent`; resolves when its result is in and it is disposed. */
  delegate(parent: Agent, n: number): Promise<void>;
}

export async function loadRig(parentCount: number): Promise<LoadRig> {
  const store = new CountingStore();
  const brood = createBrood({
    sessions: store,
    // A fixed thread count that never idles out: resource counts must not move with pool sizing.
    pool: { threads: 2, idleTimeoutMs: 3_600_000 },
    models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'short', turns: [{ text: 'ok {{prompt}}' }] }] })],
  });
  let ended = 0;
  brood.subagents.on('end', () => (ended += 1));
  const parents = await Promise.all(
    Array.from({ length: parentCount }, (_u, i) => brood.createAgent({ id: `load-parent-${i}`, model: route })),
  );
  return {
    brood,
    store,
    parents,
    ends: () => ended,
    async delegate(parent, n) {
      const run = await brood.subagents.start('spawn', {
        parent,
        prompt: `short ${n}`,
        signal: new AbortController().signal,
      });
      const result = await run.result;
      await run.dispose();
      if (result.stopReason !== 'completed' || result.output !== `ok short ${n}`) {
        throw new Error(`delegation ${n} ended ${result.stopReason}: ${result.diagnostic ?? result.output}`);
      }
    },
  };
}

export interface LoadReport {
  sequential: number;
  concurrent: number;
  seqPerSecond: number;
  concPerSecond: number;
  baseline: Record<string, number>;
  afterSequential: Record<string, number>;
  afterConcurrent: Record<string, number>;
  heapGrowthPerDelegation: number;
  ends: number;
}

/**
 * Runs `sequential` delegations one after another (round-robin over the parents), then `concurrent`
 * at once, and reports resources (baseline = after the first delegation), heap growth per delegation
 * over the sequential phase after a warm-up, and throughput.
 */
export async function runLoad(rig: LoadRig, sequential: number, concurrent: number): Promise<LoadReport> {
  const { parents } = rig;
  await waitOutRunnerTimer();
  await rig.delegate(parents[0]!, 0);
  // Pool threads start with the first run and hold a ref'd MessagePort while they boot: let the ones
  // the first delegation did not wait for finish before the baseline is taken.
  for (let i = 0; i < 400 && process.getActiveResourcesInfo().includes('MessagePort'); i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const baseline = await activeResources();
  const warmup = Math.min(100, Math.floor(sequential / 10));
  for (let n = 1; n <= warmup; n += 1) await rig.delegate(parents[n % parents.length]!, n);
  const heapBefore = heapUsed();
  let start = performance.now();
  for (let n = warmup + 1; n < sequential; n += 1) await rig.delegate(parents[n % parents.length]!, n);
  const seqMs = performance.now() - start;
  await Promise.all(parents.map((p) => p.whenIdle()));
  const afterSequential = await activeResources();
  const heapAfter = heapUsed();

  start = performance.now();
  await Promise.all(
    Array.from({ length: concurrent }, (_u, i) => rig.delegate(parents[i % parents.length]!, sequential + i)),
  );
  const concMs = performance.now() - start;
  await Promise.all(parents.map((p) => p.whenIdle()));
  const afterConcurrent = await activeResources();
  const measured = sequential - 1 - warmup;
  return {
    sequential,
    concurrent,
    seqPerSecond: (measured / seqMs) * 1000,
    concPerSecond: (concurrent / concMs) * 1000,
    baseline,
    afterSequential,
    afterConcurrent,
    heapGrowthPerDelegation: (heapAfter - heapBefore) / measured,
    ends: rig.ends(),
  };
}
