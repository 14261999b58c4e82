/**
 * Warm run_code sandbox threads for one driver thread. Each program gets a thread of its own (a busy
 * or stuck program can then only ever stall itself); a thread whose program ended cleanly goes back
 * to the pool with its engine loaded, so the next program skips thread start-up and engine load.
 * Idle threads are unref'd and end after IDLE_MS.
 */
import { AsyncResource } from 'node:async_hooks';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { BroodError } from '../errors.js';
import { isFromSandboxMessage } from './sandbox-messages.js';
import {
  CONTROL_BYTES,
  type EngineSpec,
  type FromSandbox,
  RUNNING_SINCE,
  STOP_REQUESTED,
  type ToSandbox,
} from './sandbox-protocol.js';

const IDLE_MS = 30_000;
const MAX_IDLE_PER_SPEC = 2;
/** Engine frames take several times their QuickJS stack budget of native stack (JSON.parse ~8×). */
const NATIVE_STACK_FACTOR = 10;

/**
 * Threads are started in this module's own async scope, not in the activation that happened to need
 * one first: a pooled thread's events must not be attributed to that activation by the thread watch.
 */
const rootScope = new AsyncResource('brood.code-sandbox');

export interface ThreadListener {
  message(message: FromSandbox): void;
  gone(reason: string): void;
}

export class SandboxThread {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly runningSince: BigInt64Array;
  private readonly stopCell: Int32Array;
  private listener: ThreadListener | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private alive = true;

  constructor(
    readonly key: string,
    spec: EngineSpec,
    private readonly onGone: (thread: SandboxThread) => void,
  ) {
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    this.runningSince = new BigInt64Array(control, 0, 1);
    this.stopCell = new Int32Array(control);
    const stackSizeMb = Math.ceil((spec.stackKb / 1024) * NATIVE_STACK_FACTOR) + 4;
    this.worker = new Worker(new URL(sandboxEntry()), {
      workerData: { ...spec, control },
      resourceLimits: { stackSizeMb, maxOldGenerationSizeMb: 128 + 2 * spec.memoryMb },
      // The engine prints its aborts to stderr; they become the result's message, not host output.
      stdout: true,
      stderr: true,
    });
    this.worker.stdout.resume();
    this.worker.stderr.resume();
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (raw: unknown) => {
        if (!isFromSandboxMessage(raw)) return;
        if (raw.type === 'ready') resolve();
        else this.listener?.message(raw);
      });
      const gone = (reason: string): void => {
        if (!this.alive) return;
        this.alive = false;
        this.clearIdle();
        reject(new BroodError('WORKER_CRASHED', `run_code sandbox thread failed to start: ${reason}`));
        this.listener?.gone(reason);
        this.onGone(this);
      };
      this.worker.on('error', (error) => gone(`run_code crashed: ${error.message}`));
      this.worker.on('exit', (code) => gone(`run_code exited unexpectedly (code ${code})`));
    });
    this.ready.catch(() => undefined);
  }

  get isAlive(): boolean {
    return this.alive;
  }

  attach(listener: ThreadListener): void {
    this.clearIdle();
    this.listener = listener;
    Atomics.store(this.stopCell, STOP_REQUESTED, 0);
    this.worker.ref();
  }

  detach(): void {
    this.listener = undefined;
    this.worker.unref();
  }

  post(message: ToSandbox): void {
    if (this.alive) this.worker.postMessage(message);
  }

  /** Date.now() when the engine was entered, 0 while the program awaits tool calls (or none runs). */
  engineRunningSince(): number {
    return Number(Atomics.load(this.runningSince, RUNNING_SINCE));
  }

  requestStop(): void {
    Atomics.store(this.stopCell, STOP_REQUESTED, 1);
  }

  parkIdle(onExpire: () => void): void {
    this.idleTimer = setTimeout(onExpire, IDLE_MS);
    this.idleTimer.unref();
  }

  terminate(): void {
    this.listener = undefined;
    this.clearIdle();
    void this.worker.terminate();
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

export class SandboxPool {
  private readonly idle = new Map<string, SandboxThread[]>();
  private readonly all = new Set<SandboxThread>();

  /** A thread with its engine loaded; rejects (WORKER_CRASHED) when a new thread cannot start. */
  async acquire(spec: EngineSpec): Promise<SandboxThread> {
    const key = `${spec.memoryMb}:${spec.stackKb}`;
    const parked = this.idle.get(key);
    for (let thread = parked?.pop(); thread !== undefined; thread = parked?.pop()) {
      if (thread.isAlive) return thread;
    }
    const thread = rootScope.runInAsyncScope(() => new SandboxThread(key, spec, (gone) => this.forget(gone)));
    this.all.add(thread);
    await thread.ready;
    return thread;
  }

  /** After a clean end: keep the thread warm, or end it when enough are idle already. */
  release(thread: SandboxThread): void {
    thread.detach();
    const parked = this.idle.get(thread.key) ?? [];
    if (!thread.isAlive || parked.length >= MAX_IDLE_PER_SPEC) {
      this.retire(thread);
      return;
    }
    parked.push(thread);
    this.idle.set(thread.key, parked);
    thread.parkIdle(() => this.retire(thread));
  }

  retire(thread: SandboxThread): void {
    this.forget(thread);
    thread.terminate();
  }

  close(): void {
    for (const thread of [...this.all]) this.retire(thread);
  }

  private forget(thread: SandboxThread): void {
    this.all.delete(thread);
    const parked = this.idle.get(thread.key);
    const index = parked?.indexOf(thread) ?? -1;
    if (index >= 0) parked?.splice(index, 1);
  }
}

let entry: string | undefined;

function sandboxEntry(): string {
  entry ??= locateSandboxEntry();
  return entry;
}

/**
 * The built sandbox entry sits in dist/workers next to the driver entry. Code bundled into a shared
 * chunk (dist/) or into the driver entry (dist/workers/) finds it relative to itself; code run from
 * source (tests import src/) uses the build in dist/.
 */
function locateSandboxEntry(): string {
  // This module is bundled both into ES modules (dist/*.js) and into the CommonJS pool entry, where
  // import.meta is empty.
  const here = typeof __filename === 'string' ? pathToFileURL(__filename).href : import.meta.url;
  const candidates = ['./workers/sandbox.cjs', './sandbox.cjs', '../../dist/workers/sandbox.cjs'].map(
    (path) => new URL(path, here),
  );
  for (const candidate of candidates) {
    if (candidate.protocol === 'file:' && existsSync(fileURLToPath(candidate))) return candidate.href;
  }
  throw new BroodError(
    'INVALID_CONFIG',
    'cannot find the built run_code sandbox entry (dist/workers/sandbox.cjs); run `npm run build` first',
  );
}
