/**
 * Drivers on remote `brood host` processes (issue 20). Each activation becomes one BullMQ job that
 * carries its fully resolved plan; the host that takes it runs the driver in its own worker pool and
 * every gateway call (claims, view refresh, tool calls, event batches, end) comes back over the Redis
 * channel to the real gateway here: the parent stays the one resolver, no tool body runs on a host.
 *
 * Host death or a lost channel ends the activation with `recover`, and the agent is re-planned from
 * the parent's mirror exactly like after a thread crash (a new activation, a new job). Activation ids
 * are never reused within a runner and runner ids are random, so a stale host that comes back names
 * an activation this parent no longer runs: it is told `gone` and everything it sends is ignored.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { DriverEvent, DriverPlan } from '../wire/contract.js';
import { errorMessage } from '../errors.js';
import type { ModelProviderConfig } from '../models/types.js';
import type { GatewayRemote } from '../wire/gateway.js';
import type { Activation, ActivationEnd, DriverRunner } from '../wire/runner.js';
import { inlineKeyError, type QueueRunnerConfig } from './config.js';
import {
  cellsOf,
  type HostIdentity,
  type JobData,
  jobIdOf,
  readCells,
  type ToHost,
  type ToParent,
  toParentSchema,
  toRemotePlan,
} from './frames.js';
import { openParentLink, type ParentLink } from './parent-link.js';
import { modelsKey } from './redis.js';

/** How long the model configs stay in Redis without a dispatch renewing them. */
const MODELS_TTL_MS = 3_600_000;

interface RemoteActivation {
  a: number;
  jobId: string;
  gateway: GatewayRemote;
  cells: Int32Array[];
  sentCells: number[];
  host?: { endpoint: string; identity: HostIdentity };
  cancelled?: { turn?: number };
  dispatchedAt?: number;
  settle(end: ActivationEnd): void;
}

export interface QueueRunnerDeps {
  models: readonly ModelProviderConfig[];
  onDiagnostic: (message: string) => void;
}

export class QueueRunner implements DriverRunner {
  readonly kind = 'queue' as const;
  readonly id = `p${randomUUID().replaceAll('-', '')}`;
  private readonly live = new Map<number, RemoteActivation>();
  private readonly heard = new Map<string, number>();
  /** The configs a host may receive (none with an inline apiKey), stored once per content hash. */
  private readonly modelsJson: string;
  private readonly modelsHash: string;
  private modelsStoredAt = 0;
  private storingModels: Promise<void> | undefined;
  private linking: Promise<ParentLink> | undefined;
  private link: ParentLink | undefined;
  private nextA = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastTick = 0;
  private lastBeat = 0;
  private lastQueuedCheck = 0;
  private closed = false;

  constructor(
    readonly config: QueueRunnerConfig,
    private readonly deps: QueueRunnerDeps,
  ) {
    this.modelsJson = JSON.stringify(deps.models.filter((model) => model.options.apiKey === undefined));
    this.modelsHash = createHash('sha256').update(this.modelsJson).digest('hex').slice(0, 32);
  }

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    this.nextA = this.nextA >= Number.MAX_SAFE_INTEGER ? 1 : this.nextA + 1;
    const a = this.nextA;
    let resolve!: (end: ActivationEnd) => void;
    const done = new Promise<ActivationEnd>((settle) => (resolve = settle));
    const cells = cellsOf(plan);
    const entry: RemoteActivation = {
      a,
      jobId: jobIdOf(this.id, a),
      gateway,
      cells,
      sentCells: readCells(cells),
      settle: (end) => {
        if (this.live.get(a) !== entry) return;
        this.live.delete(a);
        if (this.live.size === 0) this.idle();
        resolve(end);
      },
    };
    this.live.set(a, entry);
    this.busy();
    void this.dispatch(entry, plan);
    return {
      done,
      cancel: (turn) => {
        if (entry.host) this.toHost(entry, turn === undefined ? { k: 'cancel', a } : { k: 'cancel', a, turn });
        else entry.cancelled = turn === undefined ? {} : { turn };
      },
      forceStop: (reason) => {
        if (entry.host) return this.toHost(entry, { k: 'stop', a, reason });
        // Nobody took the job yet: the activation ends here; a host that takes it later is told `gone`.
        entry.settle({ kind: 'failed', stopReason: 'aborted', diagnostic: reason });
        void this.link?.queue.remove(entry.jobId).catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const entry of [...this.live.values()]) {
      if (entry.host) this.toHost(entry, { k: 'gone', a: entry.a });
      else void this.link?.queue.remove(entry.jobId).catch(() => undefined);
      entry.settle({ kind: 'failed', stopReason: 'aborted', diagnostic: 'the runtime closed' });
    }
    this.idle();
    const link = this.link ?? (await this.linking?.catch(() => undefined));
    // Referenced while closing: the last frames and the QUIT must not be cut short by an exiting process.
    link?.setActive(true);
    await link?.close();
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
      a: entry.a,
      timeoutMs: this.config.activationTimeoutMs,
      models: this.modelsHash,
      plan: toRemotePlan(plan, entry.cells),
    };
    try {
      const link = await this.connect();
      await link.ready();
      await this.storeModels(link);
      if (this.live.get(entry.a) !== entry) return;
      await link.queue.add('activation', data, { jobId: entry.jobId, removeOnComplete: true, removeOnFail: true });
      entry.dispatchedAt = Date.now();
    } catch (error) {
      entry.settle({
        kind: 'failed',
        stopReason: 'error',
        diagnostic: `QUEUE_UNAVAILABLE: the activation could not be queued on '${this.config.queue}' (${errorMessage(error)})`,
      });
    }
  }

  /**
   * Jobs name the configs by hash instead of carrying them (a scripted config can be tens of KB; a
   * fan-out would ship it once per child). Renewed at most every few seconds, and after any recovery
   * (a restarted Redis may have lost it; a host that misses it hands the activation back).
   */
  private storeModels(link: ParentLink): Promise<void> {
    if (Date.now() - this.modelsStoredAt < 5_000) return Promise.resolve();
    this.storingModels ??= link.commands
      .set(modelsKey(this.config.prefix, this.config.queue, this.modelsHash), this.modelsJson, 'PX', MODELS_TTL_MS)
      .then(() => {
        this.modelsStoredAt = Date.now();
      })
      .finally(() => {
        this.storingModels = undefined;
      });
    return this.storingModels;
  }

  private connect(): Promise<ParentLink> {
    this.linking ??= openParentLink(
      this.config,
      this.id,
      {
        batch: (from, frames) => this.onBatch(from, frames),
        broken: (peer) => this.hostLost(peer),
        malformed: (reason) => this.deps.onDiagnostic(`queue runner: ${reason}`),
      },
      this.deps.onDiagnostic,
    ).then((link) => {
      this.link = link;
      link.setActive(this.live.size > 0);
      return link;
    });
    // A failed open (bullmq or ioredis missing) is retried by the next activation.
    this.linking.catch(() => (this.linking = undefined));
    return this.linking;
  }

  private onBatch(from: string, frames: unknown[]): void {
    this.heard.set(from, Date.now());
    for (const raw of frames) {
      const parsed = toParentSchema.safeParse(raw);
      if (!parsed.success) {
        this.deps.onDiagnostic(`queue runner: a malformed frame from host ${from} was dropped`);
        continue;
      }
      this.onFrame(from, parsed.data);
    }
  }

  private onFrame(from: string, frame: ToParent): void {
    if (frame.k === 'beat') return;
    const entry = this.live.get(frame.a);
    if (frame.k === 'hello') {
      if (!entry || entry.host) {
        if (entry?.host?.endpoint !== from) this.send(from, { k: 'gone', a: frame.a });
        return;
      }
      entry.host = { endpoint: from, identity: frame.host };
      this.heard.set(from, Date.now());
      this.pushCells(entry, true);
      const { cancelled } = entry;
      if (cancelled) this.toHost(entry, { k: 'cancel', a: entry.a, ...cancelled });
      return;
    }
    if (!entry || entry.host?.endpoint !== from) {
      // A host acting for an activation it was never bound to here: its hello was lost. It cannot be
      // trusted to have the current state, so the activation is re-planned.
      if (entry && !entry.host) entry.settle({ kind: 'recover' });
      if (frame.k !== 'end') this.send(from, { k: 'gone', a: frame.a });
      return;
    }
    if (frame.k === 'end') {
      if (frame.end.kind === 'recover') this.modelsStoredAt = 0;
      entry.settle(frame.end);
      return;
    }
    if (frame.k === 'log') {
      void entry.gateway.log(withHost(frame.events, entry.host.identity) as DriverEvent[]);
      return;
    }
    const method = entry.gateway[frame.m] as (...args: unknown[]) => Promise<unknown>;
    void method.apply(entry.gateway, frame.args).then((reply) => {
      if (this.live.get(entry.a) !== entry) return;
      // Cells first: a tool call that changed the registry is seen before its result.
      this.pushCells(entry, false);
      this.toHost(entry, { k: 'reply', a: entry.a, id: frame.id, r: reply });
    });
  }

  private pushCells(entry: RemoteActivation, always: boolean): void {
    const values = readCells(entry.cells);
    if (!always && values.every((value, index) => value === entry.sentCells[index])) return;
    entry.sentCells = values;
    this.toHost(entry, { k: 'cells', a: entry.a, v: values });
  }

  private toHost(entry: RemoteActivation, frame: ToHost): void {
    if (entry.host) this.send(entry.host.endpoint, frame);
  }

  private send(endpoint: string, frame: ToHost): void {
    this.link?.channel.send(endpoint, frame);
  }

  /** A host went silent or a batch to or from it was lost: its activations are re-planned elsewhere. */
  private hostLost(endpoint: string): void {
    this.modelsStoredAt = 0;
    for (const entry of [...this.live.values()]) {
      if (entry.host?.endpoint !== endpoint) continue;
      this.send(endpoint, { k: 'gone', a: entry.a });
      entry.settle({ kind: 'recover' });
    }
    this.heard.delete(endpoint);
  }

  private busy(): void {
    this.link?.setActive(true);
    if (this.timer) return;
    this.lastTick = Date.now();
    this.timer = setInterval(() => this.tick(), Math.max(20, Math.min(100, this.config.activationTimeoutMs / 20)));
    this.timer.unref();
  }

  private idle(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.link?.setActive(false);
  }

  private tick(): void {
    const now = Date.now();
    const timeout = this.config.activationTimeoutMs;
    // This process was stalled (not the hosts): nobody is judged on the silence it caused.
    if (now - this.lastTick > timeout / 4) for (const host of this.heard.keys()) this.heard.set(host, now);
    this.lastTick = now;
    const hosts = new Set<string>();
    for (const entry of this.live.values()) {
      if (!entry.host) continue;
      hosts.add(entry.host.endpoint);
      this.pushCells(entry, false);
    }
    for (const host of hosts) {
      const heard = this.heard.get(host) ?? now;
      if (now - heard > timeout) this.hostLost(host);
    }
    if (now - this.lastBeat >= timeout / 4) {
      this.lastBeat = now;
      for (const host of hosts) this.send(host, { k: 'beat' });
    }
    // Checked every quarter timeout, so a lost job is re-planned within 1.25 timeouts of being queued or taken.
    if (now - this.lastQueuedCheck >= timeout / 4) {
      this.lastQueuedCheck = now;
      void this.checkQueued(now - timeout);
    }
  }

  /**
   * A queued job that no host holds any more (Redis restarted without it, or its host died before
   * its hello arrived and BullMQ failed it as stalled) would wait forever, and so would one a host
   * took and then went silent on before its hello (a host stopped, wedged or partitioned right after
   * taking it: BullMQ keeps it active while that host's lock lives). Both are re-planned; a hello that
   * comes later names an activation that no longer exists and is told `gone`.
   */
  private async checkQueued(before: number): Promise<void> {
    const link = this.link;
    if (!link) return;
    const waiting = [...this.live.values()].filter(
      (entry) => !entry.host && entry.dispatchedAt !== undefined && entry.dispatchedAt < before,
    );
    for (const entry of waiting) {
      const job = await link.queue.getJob(entry.jobId).catch(() => null);
      const state = job ? await job.getState().catch(() => 'error') : 'unknown';
      if (entry.host || this.live.get(entry.a) !== entry) continue;
      const takenAndSilent = state === 'active' && (job?.processedOn ?? Number.POSITIVE_INFINITY) < before;
      if (state === 'unknown' || state === 'completed' || state === 'failed' || takenAndSilent) {
        this.modelsStoredAt = 0;
        entry.settle({ kind: 'recover' });
      }
    }
  }
}

/** `model/request` records which host ran it. */
function withHost(events: unknown, host: HostIdentity): unknown {
  if (!Array.isArray(events)) return events;
  return events.map((event: unknown) => {
    const candidate = event as { type?: unknown; data?: unknown } | null;
    if (candidate?.type !== 'model/request' || typeof candidate.data !== 'object' || candidate.data === null)
      return event;
    return { ...candidate, data: { ...(candidate.data as Record<string, unknown>), host } };
  });
}
