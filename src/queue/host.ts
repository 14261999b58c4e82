/**
 * `brood host`: takes activations from the BullMQ queue and runs their drivers in this process's own
 * worker pool (the same driver code as the worker runner), their gateways proxied over the Redis
 * channel to the parent that queued them. It holds no policy: claims, tools, sessions and the gate
 * stay with the parent. A parent that goes silent for its activation timeout has its activations
 * severed here; the host keeps serving other parents.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Job, Worker } from 'bullmq';
import { BroodError, errorMessage } from '../errors.js';
import type { ModelProviderConfig } from '../models/types.js';
import type { ActivationEnd } from '../wire/runner.js';
import { WorkerRunner } from '../pool/worker-runner.js';
import { Channel } from './channel.js';
import {
  fromRemotePlan,
  type JobData,
  jobDataSchema,
  modelConfigsSchema,
  type ToHost,
  type ToParent,
  toHostSchema,
} from './frames.js';
import { HostActivation } from './host-activation.js';
import { HostRedisLog } from './host-log.js';
import type { HostTracing } from './host-trace.js';
import {
  channelKey,
  checkDatabase,
  modelsKey,
  createClient,
  describeConnection,
  disconnect,
  queueUnavailable,
  type RedisClient,
  whenReady,
} from './redis.js';

export interface HostOptions {
  redis: string;
  queue: string;
  prefix: string;
  threads: number;
  concurrency: number;
  /** The parents' queueRunner secret: batches are sealed and checked (unset: Redis is trusted). */
  secret?: string;
  /** Diagnostics (stderr for the CLI). */
  log(line: string): void;
  /** `--telemetry`: a span per activation in the process's global OpenTelemetry tracing. */
  tracing?: HostTracing;
}

/**
 * BullMQ's lock on a job a host holds. It decides nothing about recovery: each parent re-plans an
 * activation whose host has been silent for its own `activationTimeoutMs`, before or after the
 * host's hello (queue-runner.ts), so parents with different timeouts can share hosts. A dead host's
 * job is only cleaned up by BullMQ once this lock lapses (maxStalledCount 0: failed, not re-run).
 */
const LOCK_MS = 10_000;
const CONNECT_ATTEMPTS = 3;
const MODELS_MISSING = "the parent's model configs are not in Redis (any more)";

interface ParentState {
  heard: number;
  timeoutMs: number;
  lastBeat: number;
  activations: Set<HostActivation>;
}

export class QueueHost {
  readonly id = `h${randomUUID().replaceAll('-', '')}`;
  readonly identity = { name: hostname(), pid: process.pid };
  private readonly live = new Map<string, HostActivation>();
  private readonly parents = new Map<string, ParentState>();
  private readonly runners = new Map<string, Promise<WorkerRunner>>();
  private worker: Worker | undefined;
  private channel: Channel | undefined;
  private clients: RedisClient[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastTick = Date.now();
  private stopping: Promise<void> | undefined;
  private readonly redisLog: HostRedisLog;

  constructor(private readonly options: HostOptions) {
    this.redisLog = new HostRedisLog(options.log);
  }

  /**
   * Resolves once connected and taking work. Any failure to set up — Redis unreachable, a database
   * it refuses, BullMQ's own checks — rejects QUEUE_UNAVAILABLE with everything closed again.
   */
  async start(): Promise<void> {
    const { Worker } = await import('bullmq');
    const where = describeConnection(this.options.redis);
    try {
      await this.connect(where);
      await this.takeWork(Worker);
    } catch (error) {
      await this.stop();
      throw error instanceof BroodError
        ? error
        : queueUnavailable(`cannot set up the host on Redis at ${where}`, error);
    }
  }

  private async connect(where: string): Promise<void> {
    const { redis } = this.options;
    for (const name of ['brood-host', 'brood-host-channel', 'brood-host-jobs'])
      this.clients.push(await createClient(redis, { name, bounded: false }));
    for (const client of this.clients) {
      await whenReady(client, CONNECT_ATTEMPTS, where);
      await checkDatabase(client, where);
    }
    for (const client of this.clients) client.on('error', this.redisLog.error);
  }

  private async takeWork(Worker: typeof import('bullmq').Worker): Promise<void> {
    const { prefix, queue } = this.options;
    const [commands, blocking, jobs] = this.clients as [RedisClient, RedisClient, RedisClient];
    this.channel = new Channel(
      this.id,
      commands,
      blocking,
      (endpoint) => channelKey(prefix, queue, endpoint),
      600_000,
      {
        batch: (from, frames) => this.onBatch(from, frames),
        broken: (peer) => this.parentLost(peer, 'batches between this host and the parent were lost', true),
        malformed: (reason) => this.options.log(`brood host: ${reason}`),
      },
      this.options.secret,
    );
    this.channel.start();
    this.worker = new Worker(queue, (job: Job) => this.run(job), {
      connection: jobs,
      prefix,
      concurrency: this.options.concurrency,
      lockDuration: LOCK_MS,
      stalledInterval: LOCK_MS / 2,
      // A job whose host died is not handed to another host by BullMQ: its plan is stale. The parent
      // re-plans the activation from its own mirror and queues a new job.
      maxStalledCount: 0,
    });
    this.worker.on('error', this.redisLog.error);
    await this.worker.waitUntilReady();
    this.timer = setInterval(() => this.tick(), 100);
  }

  /** Stops taking work and hands every activation it holds back to its parent (re-planned elsewhere). */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    const closing = this.worker?.close();
    for (const activation of [...this.live.values()]) this.handBack(activation, 'the host is shutting down');
    await closing?.catch(() => undefined);
    await this.channel?.close();
    await Promise.all(
      [...this.runners.values()].map((runner) =>
        runner.then(
          (r) => r.close(),
          () => undefined,
        ),
      ),
    );
    await Promise.all(this.clients.map((client) => disconnect(client)));
  }

  private async run(job: Job): Promise<void> {
    const parsed = jobDataSchema.safeParse(job.data);
    if (!parsed.success) return this.options.log(`brood host: job ${job.id} is not an activation; dropped`);
    const data = parsed.data as unknown as JobData;
    const send = (frame: ToParent): void => this.channel?.send(data.parent, frame);
    send({ k: 'hello', a: data.a, host: this.identity });
    let local: ReturnType<typeof fromRemotePlan>;
    try {
      local = fromRemotePlan(data.plan);
    } catch (error) {
      const end: ActivationEnd = { kind: 'failed', stopReason: 'error', diagnostic: errorMessage(error) };
      return send({ k: 'end', a: data.a, end });
    }
    const activation = new HostActivation(data.parent, data.a, local.cells, send);
    const traced = this.options.tracing?.activation(data.plan);
    let outcome: ActivationEnd | undefined;
    const parent = this.parentOf(data.parent, data.timeoutMs);
    const key = `${data.parent}:${data.a}`;
    this.live.set(key, activation);
    parent.activations.add(activation);
    try {
      if (this.stopping) return this.handBack(activation, 'the host is shutting down');
      const runner = await this.runnerFor(data.models).catch((error: unknown) => error as Error);
      if (activation.severed) return;
      if (runner instanceof Error) {
        // Configs a restarted Redis lost: the parent stores them again when it re-plans.
        if (runner.message === MODELS_MISSING) return this.handBack(activation, runner.message);
        return send({ k: 'end', a: data.a, end: { kind: 'failed', stopReason: 'error', diagnostic: runner.message } });
      }
      const started = runner.activate(local.plan, activation.gateway);
      activation.attach(started);
      const end = await started.done;
      outcome = end;
      if (!activation.severed) send({ k: 'end', a: data.a, end });
    } finally {
      traced?.end(outcome);
      this.live.delete(key);
      parent.activations.delete(activation);
    }
  }

  private handBack(activation: HostActivation, reason: string): void {
    if (!activation.severed)
      this.channel?.send(activation.parent, { k: 'end', a: activation.a, end: { kind: 'recover' } });
    activation.sever(reason);
  }

  /** One local pool per set of model configs (per parent deployment), read from Redis by content hash once. */
  private runnerFor(hash: string): Promise<WorkerRunner> {
    let runner = this.runners.get(hash);
    if (!runner) {
      runner = this.loadModels(hash).then(
        (models) =>
          new WorkerRunner({
            models,
            threads: this.options.threads,
            onDiagnostic: (line) => this.options.log(`brood host: ${line}`),
          }),
      );
      this.runners.set(hash, runner);
      runner.catch(() => this.runners.delete(hash));
    }
    return runner;
  }

  private async loadModels(hash: string): Promise<ModelProviderConfig[]> {
    const json = await this.clients[0]?.get(modelsKey(this.options.prefix, this.options.queue, hash));
    if (json === null || json === undefined) throw new Error(MODELS_MISSING);
    return modelConfigsSchema.parse(JSON.parse(json)) as unknown as ModelProviderConfig[];
  }

  private parentOf(parent: string, timeoutMs: number): ParentState {
    let state = this.parents.get(parent);
    if (!state) {
      state = { heard: Date.now(), timeoutMs, lastBeat: 0, activations: new Set() };
      this.parents.set(parent, state);
    }
    // A job from it is news of it: a parent judged silent earlier starts afresh.
    state.heard = Date.now();
    state.timeoutMs = timeoutMs;
    return state;
  }

  private onBatch(from: string, frames: unknown[]): void {
    const parent = this.parents.get(from);
    if (parent) parent.heard = Date.now();
    for (const raw of frames) {
      const parsed = toHostSchema.safeParse(raw);
      if (parsed.success) this.onFrame(from, parsed.data);
      else this.options.log(`brood host: a malformed frame from parent ${from} was dropped`);
    }
  }

  private onFrame(from: string, frame: ToHost): void {
    if (frame.k === 'beat') return;
    const activation = this.live.get(`${from}:${frame.a}`);
    if (!activation) return;
    if (frame.k === 'reply') activation.reply(frame.id, frame.r);
    else if (frame.k === 'cells') activation.setCells(frame.v);
    else if (frame.k === 'cancel') activation.cancel(frame.turn);
    else if (frame.k === 'stop') activation.forceStop(frame.reason);
    else if (frame.k === 'gone') activation.sever('the parent no longer runs this activation');
  }

  /** `report`: tell the parent too (it may not have noticed: a batch it sent was lost). */
  private parentLost(parent: string, reason: string, report: boolean): void {
    const state = this.parents.get(parent);
    if (!state) return;
    for (const activation of [...state.activations]) {
      if (report) this.handBack(activation, reason);
      else activation.sever(reason);
    }
  }

  private tick(): void {
    const now = Date.now();
    const stalled = now - this.lastTick > 1_000;
    this.lastTick = now;
    for (const [id, state] of this.parents) {
      if (stalled) state.heard = now;
      if (state.activations.size === 0) {
        if (now - state.heard > state.timeoutMs * 6) this.parents.delete(id);
        continue;
      }
      if (now - state.heard > state.timeoutMs) {
        this.parentLost(id, `the parent was silent for more than ${state.timeoutMs} ms`, false);
        continue;
      }
      if (now - state.lastBeat >= state.timeoutMs / 4) {
        state.lastBeat = now;
        this.channel?.send(id, { k: 'beat' });
      }
    }
  }
}
