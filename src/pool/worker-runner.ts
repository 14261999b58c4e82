/**
 * Drivers in pooled worker threads (SPEC §10). Each pool thread keeps one link to the parent; an
 * activation is placed on the least-loaded thread and runs there with its plan, its gateway served
 * over that link. Many drivers share a thread because they mostly wait (on the model or on the
 * parent), and an activation never holds capacity a child needs. Thread deaths are attributed through
 * the watch board (thread-deaths.ts); hung threads are recycled.
 */

import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ResourceLimits } from 'node:worker_threads';
import { type Clock, systemClock } from '../clock.js';
import { DEFAULTS } from '../defaults.js';
import { BroodError, errorMessage } from '../errors.js';
import type { ModelProviderConfig } from '../models/types.js';
import type { GatewayRemote } from '../wire/gateway.js';
import type { DriverPlan } from '../wire/protocol.js';
import type { Activation, ActivationEnd, DriverRunner } from '../wire/runner.js';
import { createBoard, WatchBoard } from '../wire/watch-board.js';
import { HangWatchdog } from './hang-watchdog.js';
import { type ActivationOwner, RunnerActivation } from './runner-activation.js';
import { DeathJudge } from './thread-deaths.js';
import { ThreadGroup } from './thread-group.js';
import { outcomeEnd, type ThreadLink } from './thread-link.js';

export interface WorkerRunnerOptions {
  /** Model provider configs, shipped once per thread (workerData) instead of with every plan. */
  models: readonly ModelProviderConfig[];
  threads?: number;
  idleTimeoutMs?: number;
  hangTimeoutMs?: number;
  resourceLimits?: ResourceLimits;
  /** Where thread deaths that belong to no activation are reported. */
  onDiagnostic?: (message: string) => void;
  /** Overrides the thread links' mid-tick exchange slice (src/wire/link.ts SLICE_MS): `brood host` only. */
  linkSliceMs?: number;
  /** What the hang watchdog checks on (the system clock unless a test moves time itself). */
  clock?: Clock;
}

/** What piscina loads: a small entry that loads the driver bundle through a code cache (workers/pool-entry.ts). */
export const WORKER_ENTRY = 'pool-entry.cjs';

export class WorkerRunner implements DriverRunner {
  readonly kind = 'worker' as const;
  private readonly shared: ThreadGroup;
  private readonly boardBuffer = createBoard();
  private readonly board = new WatchBoard(this.boardBuffer);
  private readonly judge = new DeathJudge(this.board);
  private readonly live = new Map<number, RunnerActivation>();
  private readonly hangTimeoutMs: number;
  private readonly watchdog: HangWatchdog;
  private nextToken = 0;

  constructor(private readonly options: WorkerRunnerOptions) {
    this.hangTimeoutMs = options.hangTimeoutMs ?? DEFAULTS.hangTimeoutMs;
    this.watchdog = new HangWatchdog({
      timeoutMs: this.hangTimeoutMs,
      clock: options.clock ?? systemClock,
      heartbeats: () => this.busyThreads().map((threadId) => [threadId, this.board.heartbeat(threadId)] as const),
      hung: (threadId) => this.hung(threadId),
    });
    const cores = Math.max(1, availableParallelism());
    const threads = options.threads ?? cores;
    this.shared = this.createGroup({ threads, warm: Math.min(threads, cores) }, 'shared');
  }

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    const token = this.takeToken();
    const quarantined = this.judge.isQuarantined(plan.agentId);
    const group = quarantined ? this.createGroup({ threads: 1, warm: 1 }, 'quarantine') : this.shared;
    // All endsUnplaced reads of the plan: the activation keeps this, not the plan and its view.
    const plannedTurn = plan.resumeTurn ? undefined : plan.firstMessage?.turn;
    const entry = new RunnerActivation(this.owner, token, plan.agentId, quarantined, gateway, group, plannedTurn);
    this.live.set(token, entry);
    this.watchdog.start();
    entry.group.place(entry, plan);
    return entry;
  }

  /** What every activation of this runner asks of it (one object, not closures per activation). */
  private readonly owner: ActivationOwner = {
    isLive: (token) => this.live.has(token),
    settled: (entry, end) => this.release(entry, 'outcome' in end ? this.finished(entry, end.outcome) : end),
    endsUnplaced: (entry, planned, turn) => this.endsUnplaced(entry, planned, turn),
    forceStop: (entry, reason) => {
      if (entry.thread) this.recycle(entry.thread, { culprit: entry.token, reason, stopReason: 'aborted' });
    },
    endAtLastTurn: (entry) => this.endAtLastTurn(entry),
  };

  get threads(): number {
    return this.shared.threads;
  }

  async close(): Promise<void> {
    this.watchdog.stop();
    const stranded = await this.shared.destroy();
    for (const entry of stranded)
      entry.settle({ kind: 'failed', stopReason: 'aborted', diagnostic: 'the runtime closed' });
  }

  private createGroup(size: { threads: number; warm: number }, kind: 'shared' | 'quarantine'): ThreadGroup {
    return new ThreadGroup({
      filename: locateWorkerEntry(),
      ...size,
      models: this.options.models,
      idleTimeoutMs: this.options.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs,
      resourceLimits: this.options.resourceLimits ?? defaultResourceLimits(),
      board: this.boardBuffer,
      placed: (placed, thread) => this.placed(placed as RunnerActivation, thread),
      died: (thread, cause) => this.threadDied(thread, cause),
      diagnostic: (error) => this.onPoolError(kind, error),
      ...(this.options.linkSliceMs === undefined ? {} : { linkSliceMs: this.options.linkSliceMs }),
    });
  }

  /**
   * A thread died while its link carried no activation (a stray timer of an adapter throwing after its
   * turn, an idle thread hitting resourceLimits; thread-group.ts filters piscina's 'error' events to
   * these). Unheard, piscina's event is an uncaught exception that kills the host. Nobody fails:
   * piscina has already removed the thread, and the next activation that needs one starts another
   * (ThreadGroup.grow()); the runtime only reports it.
   */
  private onPoolError(kind: 'shared' | 'quarantine', error: unknown): void {
    const where = kind === 'quarantine' ? 'a quarantine worker thread' : 'a pool worker thread';
    this.options.onDiagnostic?.(
      `${where} died while running no driver task (${describeDeath(error)}); a new one starts when a driver needs it`,
    );
  }

  /**
   * A cancel of the turn an activation was planned for, while it still waits for a thread (the pool's
   * first threads take ~0.5 s to boot): the turn ends `aborted` now instead of when a driver starts
   * only to see the cancel. Not for a recovered turn, whose dead driver's request must still be closed.
   */
  /** `planned`: the turn of the plan's first message, unless the plan resumes a turn. */
  private endsUnplaced(entry: RunnerActivation, planned: number | undefined, turn: number | undefined): boolean {
    if (planned === undefined || (turn !== undefined && turn !== planned)) return false;
    entry.group.forget(entry.token);
    entry.settle({
      kind: 'failed',
      stopReason: 'aborted',
      diagnostic: 'the turn was cancelled before its driver started',
      neverStarted: true,
    });
    return true;
  }

  private placed(entry: RunnerActivation, thread: ThreadLink): void {
    entry.thread = thread;
    if (entry.cancelled) thread.cancel(entry.token, entry.cancelled.turn);
  }

  private takeToken(): number {
    this.nextToken = this.nextToken >= 0x7fff_fffe ? 1 : this.nextToken + 1;
    return this.nextToken;
  }

  private finished(entry: RunnerActivation, outcome: unknown): ActivationEnd {
    const { end, ok } = outcomeEnd(outcome);
    if (ok) this.judge.cleared(entry.agentId);
    return end;
  }

  /**
   * See endsAtLastTurn. At once only while another driver holds the thread: an idle thread takes the
   * answer at once and its `end` frame follows, and ending first then only made the next start sent
   * to that thread wait behind this driver's last steps (start → first request p50 +0.1 ms,
   * measured). If that frame has not come a timer tick later, the thread got busy: end then.
   */
  private endAtLastTurn(entry: RunnerActivation, atOnce = false): void {
    const thread = entry.thread;
    if (!thread || !this.live.has(entry.token)) return;
    const running = this.board.running(thread.threadId);
    if (!atOnce && (running === 0 || running === entry.token)) {
      entry.endTimer = setTimeout(() => this.endAtLastTurn(entry, true), 1);
      return;
    }
    this.judge.cleared(entry.agentId);
    entry.settle({ kind: 'finished' });
  }

  private release(entry: RunnerActivation, end: ActivationEnd): ActivationEnd {
    clearTimeout(entry.endTimer);
    this.live.delete(entry.token);
    entry.thread?.release(entry.token);
    if (entry.quarantined) void entry.group.destroy().catch(() => undefined);
    if (this.live.size === 0) this.watchdog.stop();
    return end;
  }

  /** Every activation on a dead thread is judged: the one that was executing fails, the others recover. */
  private threadDied(thread: ThreadLink, cause: unknown): void {
    const reason = describeDeath(cause);
    for (const entry of [...thread.live.values()] as RunnerActivation[]) {
      entry.settle(
        this.judge.judge(
          { token: entry.token, agentId: entry.agentId, threadId: thread.threadId, quarantined: entry.quarantined },
          reason,
        ),
      );
    }
    this.judge.plannedKills.delete(thread.threadId);
  }

  /** Terminates one thread on purpose; its exit is then judged like any death. */
  private recycle(
    thread: ThreadLink,
    kill: { culprit: number; reason: string; stopReason: 'error' | 'aborted' },
  ): void {
    if (this.judge.plannedKills.has(thread.threadId) || !thread.worker) return;
    this.judge.plannedKills.set(thread.threadId, kill);
    void thread.worker.terminate();
  }

  /** The threads running activations now. */
  private busyThreads(): number[] {
    const threads = new Set<number>();
    for (const entry of this.live.values()) if (entry.thread) threads.add(entry.thread.threadId);
    return [...threads];
  }

  /** A thread whose heartbeat stopped for hangTimeoutMs has a driver spinning synchronously on it. */
  private hung(threadId: number): void {
    const thread = [...this.live.values()].find((entry) => entry.thread?.threadId === threadId)?.thread;
    if (!thread) return;
    const reason = `its worker thread stopped responding for more than ${this.hangTimeoutMs} ms (a driver spinning synchronously) and was recycled`;
    this.recycle(thread, { culprit: this.board.running(threadId), reason, stopReason: 'error' });
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
  const candidates = [
    new URL(`./workers/${WORKER_ENTRY}`, import.meta.url),
    new URL(`../../dist/workers/${WORKER_ENTRY}`, import.meta.url),
  ];
  for (const candidate of candidates) {
    if (candidate.protocol === 'file:' && existsSync(fileURLToPath(candidate))) return fileURLToPath(candidate);
  }
  throw new BroodError(
    'INVALID_CONFIG',
    `cannot find the built worker entry (dist/workers/${WORKER_ENTRY}); run \`npm run build\` first`,
  );
}

/** A pool thread's V8 limits when the host sets none (`pool.resourceLimits`, given whole, replaces them). */
export function defaultResourceLimits(): ResourceLimits {
  return {
    maxOldGenerationSizeMb: DEFAULTS.maxOldGenerationSizeMb,
    maxYoungGenerationSizeMb: DEFAULTS.maxYoungGenerationSizeMb,
  };
}
