/**
 * `brood host`: takes activations from the BullMQ queue and runs their drivers in this process's own
 * worker pool (the same driver code as the worker runner), their gateways called over the link to the
 * parent that queued them (the pool threads' link protocol, over a Redis carrier: host-parent.ts). It holds no policy: claims, tools, sessions and the gate
 * stay with the parent. A parent that goes silent for its activation timeout has its activations
 * severed here; the host keeps serving other parents.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Job, Worker } from 'bullmq';
import { BroodError, errorMessage } from '../errors.js';
import { checkedProviderConfig } from '../models/catalog.js';
import type { ModelProviderConfig } from '../models/types.js';
import { endOutcome } from '../pool/driver-link.js';
import { WorkerRunner } from '../pool/worker-runner.js';
import type { ActivationEnd } from '../wire/runner.js';
import { Channel } from './channel.js';
import { HostActivation } from './host-activation.js';
import { HostRedisLog } from './host-log.js';
import { type HostCodeProvider, type HostModels, hostModels, unconfiguredProvider } from './host-models.js';
import { ParentEnd } from './host-parent.js';
import type { HostTracing } from './host-trace.js';
import { fromRemotePlan, isJobData, type JobData, modelConfigsSchema } from './job.js';
import { jobAuthentic, openModelsRecord } from './record-seal.js';
import {
  channelKey,
  checkDatabase,
  createClient,
  describeConnection,
  disconnect,
  modelsKey,
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
  /** The parents' queueRunner secret: batches, jobs and model configs are sealed and checked (unset: not). */
  secret?: string;
  /**
   * The providers whose adapter code this host loads (`brood host --config`), by id: a provider config
   * of a kind that loads code, read from Redis, runs only with the code fields of the one here.
   */
  codeProviders?: readonly HostCodeProvider[];
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

/**
 * The model configs a job names are not usable here: not in Redis (any more: a restarted Redis lost
 * them) or refused (record-seal.ts). The activation is handed back; the parent stores its configs
 * again when it re-plans.
 */
class ModelsUnusable extends Error {}

/** A local pool per set of model configs, and what the host made of them (host-models.ts). */
interface ModelsPool {
  runner: WorkerRunner;
  models: HostModels;
}

export class QueueHost {
  readonly id = `h${randomUUID().replaceAll('-', '')}`;
  readonly identity = { name: hostname(), pid: process.pid };
  private readonly parents = new Map<string, ParentEnd>();
  private readonly pools = new Map<string, Promise<ModelsPool>>();
  private worker: Worker | undefined;
  private channel: Channel | undefined;
  private clients: RedisClient[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private readonly redisLog: HostRedisLog;
  /** Activations placed here by `place` frames (not jobs), running now. */
  private placedRunning = 0;

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
        batch: (from, frames) => this.parents.get(from)?.deliver(frames),
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
    for (const parent of this.parents.values())
      for (const activation of [...parent.activations.values()]) this.handBack(activation, 'the host is shutting down');
    await closing?.catch(() => undefined);
    for (const parent of this.parents.values()) parent.close();
    await this.channel?.close();
    await Promise.all(
      [...this.pools.values()].map((pool) =>
        pool.then(
          ({ runner }) => runner.close(),
          () => undefined,
        ),
      ),
    );
    await Promise.all(this.clients.map((client) => disconnect(client)));
  }

  private run(job: Job): Promise<void> {
    if (!isJobData(job.data))
      return Promise.resolve(this.options.log(`brood host: job ${job.id} is not an activation; dropped`));
    if (!jobAuthentic(job.data, this.options.secret))
      return Promise.resolve(this.options.log(`brood host: job ${job.id} failed authentication; dropped`));
    return this.runActivation(job.data);
  }

  /**
   * How many more activations this host can take as `place` frames: what is free of its concurrency,
   * keeping one slot for BullMQ (its worker takes at most concurrency − placed jobs, and never fewer
   * than one), so jobs and placed activations together never exceed the concurrency.
   */
  private room(): number {
    let held = 0;
    for (const parent of this.parents.values()) held += parent.activations.size;
    const { concurrency } = this.options;
    return Math.max(0, Math.min(concurrency - held, concurrency - 1 - this.placedRunning));
  }

  /**
   * Tells a parent how much room this host has, with each hello and end of one of its activations:
   * its next ones can come straight here (`place` frames) instead of through BullMQ.
   */
  private offerRoom(parent: ParentEnd): void {
    if (!this.stopping && this.parents.get(parent.parent) === parent) parent.send({ kind: 'room', count: this.room() });
  }

  /** A parent placed an activation here (it was told of room): run like a job, or turned away when full. */
  private place(parent: ParentEnd, data: JobData): void {
    if (this.stopping || this.room() === 0) {
      parent.send({ kind: 'full', activation: data.a });
      return;
    }
    this.placedRunning += 1;
    this.fitWorker();
    void this.runActivation(data).finally(() => {
      this.placedRunning -= 1;
      this.fitWorker();
    });
  }

  private fitWorker(): void {
    if (this.worker) this.worker.concurrency = Math.max(1, this.options.concurrency - this.placedRunning);
  }

  private async runActivation(data: JobData): Promise<void> {
    const parent = this.parentOf(data.parent, data.timeoutMs);
    parent.send({ kind: 'hello', activation: data.a, host: this.identity });
    let local: ReturnType<typeof fromRemotePlan>;
    try {
      local = fromRemotePlan(data.plan);
    } catch (error) {
      const diagnostic = errorMessage(error);
      return parent.send({
        kind: 'end',
        activation: data.a,
        outcome: endOutcome({ kind: 'failed', stopReason: 'error', diagnostic }),
      });
    }
    const activation = new HostActivation(data.parent, data.a, local.cells, parent);
    const traced = this.options.tracing?.activation(data.plan);
    let outcome: ActivationEnd | undefined;
    parent.activations.set(data.a, activation);
    this.offerRoom(parent);
    const end = (ending: ActivationEnd): void => {
      if (!activation.severed) parent.send({ kind: 'end', activation: data.a, outcome: endOutcome(ending) });
    };
    try {
      if (this.stopping) return this.handBack(activation, 'the host is shutting down');
      const pool = await this.poolFor(data.models).catch((error: unknown) => error as Error);
      if (activation.severed) return;
      if (pool instanceof ModelsUnusable) return this.handBack(activation, pool.message);
      if (pool instanceof Error) return end({ kind: 'failed', stopReason: 'error', diagnostic: pool.message });
      const refused = unconfiguredProvider(pool.models, local.plan.route.provider);
      if (refused)
        return end({ kind: 'failed', stopReason: 'error', diagnostic: `${refused.code}: ${refused.message}` });
      const started = pool.runner.activate(local.plan, activation.gateway);
      activation.attach(started);
      outcome = await started.done;
      end(outcome);
    } finally {
      traced?.end(outcome);
      if (parent.activations.get(data.a) === activation) parent.drop(data.a);
      this.offerRoom(parent);
    }
  }

  private handBack(activation: HostActivation, reason: string): void {
    if (!activation.severed)
      this.parents
        .get(activation.parent)
        ?.send({ kind: 'end', activation: activation.a, outcome: endOutcome({ kind: 'recover' }) });
    activation.sever(reason);
  }

  /** One local pool per set of model configs (per parent deployment), read from Redis by content hash once. */
  private poolFor(hash: string): Promise<ModelsPool> {
    let pool = this.pools.get(hash);
    if (!pool) {
      pool = this.loadModels(hash).then((models) => ({
        models,
        runner: new WorkerRunner({
          models: models.models,
          threads: this.options.threads,
          // The host's main thread only relays: what arrives from Redis arrives whole, and what
          // answers it is ready by the end of the tick. Mid-tick exchanges there only split each
          // relay into more postMessages (hosts' CPU per child −8% in interleaved N=256 runs).
          linkSliceMs: Number.POSITIVE_INFINITY,
          onDiagnostic: (line) => this.options.log(`brood host: ${line}`),
        }),
      }));
      this.pools.set(hash, pool);
      pool.catch(() => this.pools.delete(hash));
    }
    return pool;
  }

  private async loadModels(hash: string): Promise<HostModels> {
    const key = modelsKey(this.options.prefix, this.options.queue, hash);
    const body = await this.clients[0]?.get(key);
    if (body === null || body === undefined)
      throw new ModelsUnusable("the parent's model configs are not in Redis (any more)");
    const record = openModelsRecord(hash, body, this.options.secret);
    if ('refused' in record) {
      this.options.log(`brood host: the model configs at ${key} ${record.refused}; refused`);
      throw new ModelsUnusable(`the parent's model configs in Redis ${record.refused}`);
    }
    const read = modelConfigsSchema.parse(JSON.parse(record.json)) as unknown as ModelProviderConfig[];
    const models = hostModels(read, this.options.codeProviders ?? []);
    // Checked as a catalog checks them (a parent of another brood version may have written them).
    return { ...models, models: models.models.map(checkedProviderConfig) };
  }

  private parentOf(parent: string, timeoutMs: number): ParentEnd {
    let end = this.parents.get(parent);
    if (!end) {
      const channel = { sendBatch: (peer: string, frames: unknown[]) => this.channel?.sendBatch(peer, frames) };
      end = new ParentEnd(channel, parent, timeoutMs, this.options.log, (from, job) => this.place(from, job));
      this.parents.set(parent, end);
    }
    end.heardFrom(timeoutMs);
    return end;
  }

  /** `report`: tell the parent too (it may not have noticed: a batch it sent was lost). */
  private parentLost(parent: string, reason: string, report: boolean): void {
    const end = this.parents.get(parent);
    if (!end) return;
    for (const activation of [...end.activations.values()]) {
      if (report) this.handBack(activation, reason);
      else activation.sever(reason);
    }
  }

  private tick(): void {
    const now = Date.now();
    for (const [id, end] of this.parents) {
      const state = end.tick(now);
      if (state === 'silent') this.parentLost(id, `the parent was silent for more than ${end.silentForMs} ms`, false);
      else if (state === 'idle') {
        // A parent with nothing here that has been silent for its timeout is forgotten (its next job
        // makes a new end).
        end.close();
        this.parents.delete(id);
      }
    }
  }
}
