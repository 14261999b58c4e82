/**
 * Drivers in pooled worker threads (SPEC §10). One piscina task per activation; the task receives the
 * plan and one end of a fresh MessageChannel, over which the parent's gateway is exposed with comlink.
 * Atomics are disabled so ports keep delivering between tasks; many drivers share a thread because
 * they mostly wait (on the model or on the parent), and a task never holds capacity a child needs.
 * Thread deaths are attributed through the watch board (thread-deaths.ts); hung threads are recycled.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, type ResourceLimits } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { DEFAULTS } from '../defaults.js';
import { BroodError, errorMessage } from '../errors.js';
import type { DriverPlan } from '../driver/types.js';
import type { ModelProviderConfig } from '../models/types.js';
import type { GatewayRemote } from './gateway-client.js';
import { serveGateway } from './gateway-server.js';
import { activationOutcomeSchema } from './protocol.js';
import type { Activation, ActivationEnd, DriverRunner } from './runner.js';
import { DeathJudge, type DeadActivation } from './thread-deaths.js';
import { WatchBoard, createBoard } from './watch-board.js';

export interface WorkerRunnerOptions {
  /** Model provider configs, shipped once per thread (workerData) instead of with every plan. */
  models: readonly ModelProviderConfig[];
  threads?: number;
  idleTimeoutMs?: number;
  hangTimeoutMs?: number;
  resourceLimits?: ResourceLimits;
  /** Where thread deaths that belong to no task are reported (see onPoolError). */
  onDiagnostic?: (message: string) => void;
}

export const WORKER_ENTRY = 'driver.cjs';

/** Far above any realistic fan-out: drivers are async and mostly idle, so a thread hosts many. */
const TASKS_PER_THREAD = 1_000_000;

interface LiveActivation extends Omit<DeadActivation, 'threadId'> {
  threadCell: Int32Array;
  pool: Piscina;
}

export class WorkerRunner implements DriverRunner {
  readonly kind = 'worker' as const;
  private readonly pool: Piscina;
  private readonly boardBuffer = createBoard();
  private readonly board = new WatchBoard(this.boardBuffer);
  private readonly judge = new DeathJudge(this.board);
  private readonly live = new Map<number, LiveActivation>();
  private readonly hangTimeoutMs: number;
  private readonly beats = new Map<number, { value: number; at: number }>();
  private watchdog: NodeJS.Timeout | undefined;
  private nextToken = 0;

  constructor(private readonly options: WorkerRunnerOptions) {
    const threads = options.threads ?? Math.max(1, availableParallelism());
    this.hangTimeoutMs = options.hangTimeoutMs ?? DEFAULTS.hangTimeoutMs;
    this.pool = this.createPool(threads);
  }

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    const token = this.takeToken();
    const quarantined = this.judge.isQuarantined(plan.agentId);
    const threadBuffer = new SharedArrayBuffer(4);
    const entry: LiveActivation = {
      token,
      agentId: plan.agentId,
      quarantined,
      threadCell: new Int32Array(threadBuffer),
      pool: quarantined ? this.createPool(1, 'quarantine') : this.pool,
    };
    this.live.set(token, entry);
    this.startWatchdog();
    const { port1, port2 } = new MessageChannel();
    serveGateway(port1, gateway);
    // Listened for from the start: the worker usually closes its end first, which closes ours too.
    const portClosed = new Promise<void>((resolve) => port1.once('close', () => resolve()));
    const watched: DriverPlan = { ...plan, watch: { board: this.boardBuffer, token, threadCell: threadBuffer } };
    const done = entry.pool
      .run({ plan: watched, port: port2 }, { transferList: [port2] })
      .then(
        (raw: unknown) => this.finished(entry, raw),
        (error: unknown) => this.judge.judge({ ...entry, threadId: Atomics.load(entry.threadCell, 0) }, describeDeath(error)),
      )
      .finally(() => {
        this.release(entry, port1);
        // Settle once the port's handle is gone, so an idle runtime holds no handle of a finished agent (SPEC §10.7).
        return portClosed;
      });
    return {
      done,
      cancel: (turn) => port1.postMessage(turn === undefined ? { control: 'cancel' } : { control: 'cancel', turn }),
      forceStop: (reason) => this.recycle(Atomics.load(entry.threadCell, 0), { culprit: token, reason, stopReason: 'aborted' }),
    };
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  async close(): Promise<void> {
    this.stopWatchdog();
    await this.pool.destroy();
  }

  private createPool(threads: number, kind: 'shared' | 'quarantine' = 'shared'): Piscina {
    const pool = new Piscina({
      filename: locateWorkerEntry(),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: this.options.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs,
      atomics: 'disabled',
      concurrentTasksPerWorker: TASKS_PER_THREAD,
      maxQueue: Number.POSITIVE_INFINITY,
      resourceLimits: this.options.resourceLimits ?? { maxOldGenerationSizeMb: DEFAULTS.maxOldGenerationSizeMb },
      workerData: { models: this.options.models },
    });
    pool.on('error', (error: unknown) => this.onPoolError(kind, error));
    return pool;
  }

  /**
   * Piscina emits 'error' on the pool when a thread dies while it runs no task (a stray timer of an
   * adapter throwing after its turn, an idle thread hitting resourceLimits). Unheard, that event is an
   * uncaught exception that kills the host. No activation was on that thread, so nobody fails: piscina
   * has already removed the thread and starts a replacement; the runtime only reports it.
   */
  private onPoolError(kind: 'shared' | 'quarantine', error: unknown): void {
    const where = kind === 'quarantine' ? 'a quarantine worker thread' : 'a pool worker thread';
    this.options.onDiagnostic?.(`${where} died while running no driver task (${describeDeath(error)}); it was replaced`);
  }

  private takeToken(): number {
    this.nextToken = this.nextToken >= 0x7fff_fffe ? 1 : this.nextToken + 1;
    return this.nextToken;
  }

  private finished(entry: LiveActivation, raw: unknown): ActivationEnd {
    const outcome = activationOutcomeSchema.safeParse(raw);
    if (!outcome.success) return { kind: 'failed', stopReason: 'error', diagnostic: 'a driver task returned a malformed outcome' };
    if (!outcome.data.ok) return { kind: 'failed', stopReason: 'error', diagnostic: outcome.data.error.message };
    this.judge.cleared(entry.agentId);
    return { kind: 'finished' };
  }

  private release(entry: LiveActivation, port: MessagePort): void {
    this.live.delete(entry.token);
    port.close();
    if (entry.quarantined) entry.pool.destroy().catch(() => undefined);
    if (this.live.size === 0) this.stopWatchdog();
  }

  /** Terminates one thread on purpose; piscina replaces it and rejects its tasks, which are then judged. */
  private recycle(threadId: number, kill: { culprit: number; reason: string; stopReason: 'error' | 'aborted' }): void {
    if (threadId === 0 || this.judge.plannedKills.has(threadId)) return;
    const owner = [...this.live.values()].find((entry) => Atomics.load(entry.threadCell, 0) === threadId);
    const worker = owner?.pool.threads.find((thread) => thread.threadId === threadId);
    if (!worker) return;
    this.judge.plannedKills.set(threadId, kill);
    void worker.terminate();
  }

  /** A thread whose heartbeat stops for hangTimeoutMs has a driver spinning synchronously on it. */
  private checkHeartbeats(): void {
    const now = Date.now();
    const threads = new Set([...this.live.values()].map((entry) => Atomics.load(entry.threadCell, 0)).filter((id) => id !== 0));
    for (const threadId of threads) {
      const value = this.board.heartbeat(threadId);
      const seen = this.beats.get(threadId);
      if (!seen || seen.value !== value) {
        this.beats.set(threadId, { value, at: now });
      } else if (now - seen.at > this.hangTimeoutMs) {
        const reason = `its worker thread stopped responding for more than ${this.hangTimeoutMs} ms (a driver spinning synchronously) and was recycled`;
        this.recycle(threadId, { culprit: this.board.running(threadId), reason, stopReason: 'error' });
      }
    }
    for (const threadId of this.beats.keys()) if (!threads.has(threadId)) this.beats.delete(threadId);
  }

  private startWatchdog(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => this.checkHeartbeats(), Math.max(20, Math.floor(this.hangTimeoutMs / 5)));
    this.watchdog.unref();
  }

  private stopWatchdog(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = undefined;
    this.beats.clear();
  }
}

function describeDeath(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return `out of memory (${errorMessage(error)})`;
  return typeof code === 'string' ? `${errorMessage(error)} (${code})` : errorMessage(error);
}

/**
 * The built worker entry sits next to the built library (dist/workers/driver.cjs, one CommonJS bundle;
 * see tsup.config.ts for why it must not be an ES module). When brood runs from source (tests import
 * src/), the entry is taken from the build in dist/. A path, not a URL: piscina require()s it directly.
 */
export function locateWorkerEntry(): string {
  const candidates = [new URL(`./workers/${WORKER_ENTRY}`, import.meta.url), new URL(`../../dist/workers/${WORKER_ENTRY}`, import.meta.url)];
  for (const candidate of candidates) {
    if (candidate.protocol === 'file:' && existsSync(fileURLToPath(candidate))) return fileURLToPath(candidate);
  }
  throw new BroodError('INVALID_CONFIG', `cannot find the built worker entry (dist/workers/${WORKER_ENTRY}); run \`npm run build\` first`);
}
