/**
 * Drivers on remote `brood host` processes. Each activation becomes one BullMQ job carrying its fully
 * resolved plan or, when a host said it has room for more of this parent's, the same data in a `place`
 * frame on the link to that host (no BullMQ round trips; a host that is full after all answers `full`,
 * and the job is queued). The host runs the driver in its own worker pool and says `hello` on its link
 * to this parent — a pool thread's link protocol (host-link.ts) over a Redis carrier: every gateway
 * call, event batch and end comes back on it to the real gateway here. No tool body runs on a host.
 *
 * Host death or a lost channel ends the activation with `recover`, and the agent is re-planned from
 * the parent's mirror as after a thread crash (a new activation, a new job). Activation ids are never
 * reused within a runner and runner ids are random, so a stale host that comes back names an
 * activation this parent no longer runs: it is told `gone` and everything it sends is ignored. */
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../errors.js';
import type { ModelProviderConfig } from '../models/types.js';
import { type ActivationFrame, outcomeEnd } from '../pool/driver-link.js';
import type { GatewayRemote } from '../wire/gateway.js';
import { Heartbeat } from '../wire/heartbeat.js';
import type { DriverPlan } from '../wire/protocol.js';
import { redisCarrier } from '../wire/redis-carrier.js';
import type { Activation, ActivationEnd, DriverRunner } from '../wire/runner.js';
import { withCellsFirst } from './cells-first.js';
import { inlineKeyError, type QueueRunnerConfig } from './config.js';
import { HostLink } from './host-link.js';
import { cellsOf, type JobData, jobIdOf, readCells, toRemotePlan } from './job.js';
import { JobBatch } from './job-batch.js';
import { ModelsPublisher } from './models-publish.js';
import { openParentRedis, type ParentRedis } from './parent-redis.js';
import { sealJob } from './record-seal.js';
import { type RemoteActivation, recoverLostJobs } from './remote-activation.js';

export interface QueueRunnerDeps {
  models: readonly ModelProviderConfig[];
  onDiagnostic: (message: string) => void;
}

export class QueueRunner implements DriverRunner {
  readonly kind = 'queue' as const;
  readonly id = `p${randomUUID().replaceAll('-', '')}`;
  private readonly live = new Map<number, RemoteActivation>();
  /** One link per host this parent has heard from (by its channel endpoint). */
  private readonly hosts = new Map<string, HostLink>();
  private readonly heartbeat: Heartbeat<HostLink>;
  private readonly models: ModelsPublisher;
  private connecting: Promise<ParentRedis> | undefined;
  private redis: ParentRedis | undefined;
  private readonly jobs = new JobBatch(() => (this.redis as ParentRedis).queue);
  private nextA = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastQueuedCheck = 0;
  private closed = false;

  constructor(
    readonly config: QueueRunnerConfig,
    private readonly deps: QueueRunnerDeps,
  ) {
    this.models = new ModelsPublisher(deps.models, config);
    // A tick a quarter timeout late: this process stalled, and the hosts are not judged on it.
    this.heartbeat = new Heartbeat(config.activationTimeoutMs, config.activationTimeoutMs / 4);
  }

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    this.nextA = this.nextA >= Number.MAX_SAFE_INTEGER ? 1 : this.nextA + 1;
    const a = this.nextA;
    let resolve!: (end: ActivationEnd) => void;
    const done = new Promise<ActivationEnd>((settle) => (resolve = settle));
    const cells = cellsOf(plan);
    const entry: RemoteActivation = {
      token: a,
      agentId: plan.agentId,
      quarantined: false,
      jobId: jobIdOf(this.id, a),
      gateway: withCellsFirst(gateway, () => this.pushCells(entry, false)),
      cells,
      sentCells: readCells(cells),
      settle: (ending) => {
        if (this.live.get(a) !== entry) return;
        this.live.delete(a);
        entry.host?.release(a);
        if (this.live.size === 0) this.idle();
        const end = 'outcome' in ending ? outcomeEnd(ending.outcome).end : ending;
        // A host that handed an activation back may have missed the configs (a restarted Redis).
        if (end.kind === 'recover') this.models.invalidate();
        resolve(end);
      },
    };
    this.live.set(a, entry);
    this.busy();
    void this.dispatch(entry, plan);
    return {
      done,
      cancel: (turn) => {
        // Kept even when sent: a placed activation the host turns away is queued, and applied at its hello.
        entry.cancelled = turn === undefined ? {} : { turn };
        entry.host?.cancel(a, turn);
      },
      forceStop: (reason) => {
        entry.stopped = reason;
        if (entry.host) return entry.host.send({ kind: 'stop', activation: a, reason });
        // Nobody took the job yet: the activation ends here; a host that takes it later is told `gone`.
        entry.settle({ kind: 'failed', stopReason: 'aborted', diagnostic: reason });
        void this.redis?.queue.remove(entry.jobId).catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const entry of [...this.live.values()]) {
      if (entry.host) entry.host.send({ kind: 'gone', activation: entry.token });
      else void this.redis?.queue.remove(entry.jobId).catch(() => undefined);
      entry.settle({ kind: 'failed', stopReason: 'aborted', diagnostic: 'the runtime closed' });
    }
    this.idle();
    const redis = this.redis ?? (await this.connecting?.catch(() => undefined));
    // Referenced while closing: the last frames and the QUIT must not be cut short by an exiting process.
    redis?.setActive(true);
    for (const host of this.hosts.values()) host.close();
    this.hosts.clear();
    await redis?.close();
  }

  private async dispatch(entry: RemoteActivation, plan: DriverPlan): Promise<void> {
    const provider = plan.route.provider;
    const config = this.deps.models.find((model) => model.id === provider);
    if (config?.options.apiKey !== undefined) {
      return entry.settle({
        kind: 'failed',
        stopReason: 'error',
        diagnostic: `INVALID_CONFIG: ${inlineKeyError([provider]).message}`,
      });
    }
    const data: JobData = {
      parent: this.id,
      a: entry.token,
      timeoutMs: this.config.activationTimeoutMs,
      models: this.models.hash,
      plan: toRemotePlan(plan, entry.cells),
    };
    entry.job = data;
    entry.sentCells = data.plan.cells;
    try {
      const redis = await this.connect();
      await redis.ready();
      await this.models.publish(redis);
      if (this.live.get(entry.token) !== entry) return;
      const roomy = this.roomyHost();
      if (roomy) return this.place(entry, roomy, data);
      await this.queueJob(entry, data);
    } catch (error) {
      this.notQueued(entry, error);
    }
  }

  private async queueJob(entry: RemoteActivation, data: JobData): Promise<void> {
    await this.jobs.add(sealJob(data, this.config.secret), entry.jobId);
    entry.dispatchedAt = Date.now();
  }

  /**
   * The host with the most room it told of (when one of ours ended there), if said within half a
   * timeout: a host forgets a parent silent for a timeout and would drop what it places. Placing skips
   * BullMQ (a job costs a script call to add it, one to take it and one to finish it).
   */
  private roomyHost(): HostLink | undefined {
    const since = Date.now() - this.config.activationTimeoutMs / 2;
    let best: HostLink | undefined;
    for (const host of this.hosts.values())
      if (host.room > (best?.room ?? 0) && host.roomAt > since && !host.closed) best = host;
    return best;
  }

  /** Bound to `host` at once (its silence is judged from now on), the job sent on the link. */
  private place(entry: RemoteActivation, host: HostLink, data: JobData): void {
    host.room -= 1;
    entry.host = host;
    entry.placed = true;
    host.attach(entry);
    const { job, view } = host.views.place(data);
    host.send(
      view === undefined
        ? { kind: 'place', activation: entry.token, job }
        : { kind: 'place', activation: entry.token, job, view },
    );
    entry.dispatchedAt = Date.now();
  }

  /** The host had no room after all: the activation never started there and goes to the queue. */
  private full(host: HostLink, a: number): void {
    const entry = this.live.get(a);
    if (!entry?.placed || entry.host !== host || !entry.job) return;
    host.views.forget();
    host.release(a);
    entry.host = undefined;
    entry.placed = false;
    if (entry.stopped !== undefined) {
      entry.settle({ kind: 'failed', stopReason: 'aborted', diagnostic: entry.stopped });
      return;
    }
    entry.job = { ...entry.job, plan: { ...entry.job.plan, cells: readCells(entry.cells) } };
    entry.sentCells = entry.job.plan.cells;
    this.queueJob(entry, entry.job).catch((error: unknown) => this.notQueued(entry, error));
  }

  private notQueued(entry: RemoteActivation, error: unknown): void {
    const diagnostic = `QUEUE_UNAVAILABLE: the activation could not be queued on '${this.config.queue}' (${errorMessage(error)})`;
    entry.settle({ kind: 'failed', stopReason: 'error', diagnostic });
  }

  private connect(): Promise<ParentRedis> {
    this.connecting ??= openParentRedis(
      this.config,
      this.id,
      {
        batch: (from, frames) => this.hostLink(from).deliver(frames),
        broken: (peer) => {
          const link = this.hosts.get(peer);
          if (link) this.hostLost(link);
        },
        malformed: (reason) => this.deps.onDiagnostic(`queue runner: ${reason}`),
      },
      this.deps.onDiagnostic,
    ).then((redis) => {
      this.redis = redis;
      redis.setActive(this.live.size > 0);
      return redis;
    });
    // A failed open (bullmq or ioredis missing) is retried by the next activation.
    this.connecting.catch(() => (this.connecting = undefined));
    return this.connecting;
  }

  /** The link to the host at `endpoint`, made when it is first heard from. */
  private hostLink(endpoint: string): HostLink {
    let link = this.hosts.get(endpoint);
    if (!link) {
      const channel = { sendBatch: (peer: string, frames: unknown[]) => this.redis?.channel.sendBatch(peer, frames) };
      link = new HostLink(redisCarrier(channel, endpoint), {
        hello: (host, a) => this.hello(host, a),
        stray: (host, frame) => this.stray(host, frame),
        full: (host, a) => this.full(host, a),
        closed: (host) => {
          if (this.hosts.get(host.endpoint) === host) this.hosts.delete(host.endpoint);
        },
      });
      this.hosts.set(endpoint, link);
    }
    return link;
  }

  /** A host took an activation's job: bound there, unless another host has it or it is no longer run here. */
  private hello(host: HostLink, a: number): void {
    const entry = this.live.get(a);
    if (entry?.placed && entry.host === host) {
      // Placed there: bound already, and the cells it carried are the ones last sent.
      entry.placed = false;
      return;
    }
    if (!entry || entry.host) {
      if (entry?.host !== host) host.send({ kind: 'gone', activation: a });
      return;
    }
    entry.host = host;
    host.attach(entry);
    this.pushCells(entry, true);
    const { cancelled } = entry;
    if (cancelled) host.cancel(a, cancelled.turn);
  }

  /**
   * A host acting for an activation it was never bound to here: its hello was lost, so it cannot be
   * trusted to have the current state and the activation is re-planned; or it is stale (the
   * activation moved on, or ended): it is told `gone`.
   */
  private stray(host: HostLink, frame: ActivationFrame): void {
    const entry = this.live.get(frame.activation);
    if (entry && !entry.host) entry.settle({ kind: 'recover' });
    if (frame.kind !== 'end') host.send({ kind: 'gone', activation: frame.activation });
  }

  private pushCells(entry: RemoteActivation, always: boolean): void {
    const values = readCells(entry.cells);
    if (!always && values.every((value, index) => value === entry.sentCells[index])) return;
    entry.sentCells = values;
    entry.host?.send({ kind: 'cells', activation: entry.token, values });
  }

  /** A host went silent or a batch to or from it was lost: its activations are re-planned elsewhere. */
  private hostLost(host: HostLink): void {
    this.models.invalidate();
    host.room = 0;
    for (const entry of [...this.live.values()]) {
      if (entry.host !== host) continue;
      host.send({ kind: 'gone', activation: entry.token });
      entry.settle({ kind: 'recover' });
    }
  }

  private busy(): void {
    this.redis?.setActive(true);
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), Math.max(20, Math.min(100, this.config.activationTimeoutMs / 20)));
    this.timer.unref();
  }

  private idle(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.heartbeat.clear();
    this.redis?.setActive(false);
  }

  private tick(): void {
    const now = Date.now();
    const timeout = this.config.activationTimeoutMs;
    const hosts = new Set<HostLink>();
    for (const entry of this.live.values()) {
      if (!entry.host) continue;
      hosts.add(entry.host);
      this.pushCells(entry, false);
    }
    const heard = [...hosts].map((host) => [host, host.heard] as const);
    for (const host of this.heartbeat.silent(heard, now)) this.hostLost(host);
    if (this.heartbeat.beatDue(now)) for (const host of hosts) host.send({ kind: 'beat' });
    // Checked every quarter timeout, so a lost job is re-planned within 1.25 timeouts of being queued or taken.
    if (now - this.lastQueuedCheck >= timeout / 4) {
      this.lastQueuedCheck = now;
      const redis = this.redis;
      if (redis) void recoverLostJobs(redis.queue, this.live, now - timeout, () => this.models.invalidate());
    }
  }
}
