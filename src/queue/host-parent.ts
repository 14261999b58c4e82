/**
 * A host's end of its link to one parent (the same link protocol as a pool thread's, over a Redis
 * carrier): the activations it runs for that parent, the frames the parent sends them (comlink
 * answers, cancel, cells, stop, gone), and the heartbeat both ways, the parent's silence judged by the
 * one Heartbeat rule (src/wire/heartbeat.ts). The parent is another process behind Redis: every
 * frame is checked whole, and an `rpc` frame must be a comlink answer (nothing else is served here).
 */

import { readHostFrame, type ToHost, type ToParent } from '../wire/frames.js';
import { isGatewayAnswer } from '../wire/gateway.js';
import { Heartbeat } from '../wire/heartbeat.js';
import { Link } from '../wire/link.js';
import { type PeerChannel, REDIS_LINK, type RedisCarrier, redisCarrier } from '../wire/redis-carrier.js';
import type { HostActivation } from './host-activation.js';
import { isJobData, type JobData } from './job.js';
import { KnownViews } from './shared-views.js';

const FROM_PARENT = new Set(['rpc', 'cancel', 'cells', 'stop', 'gone', 'beat', 'place']);
/** The host ticks every 100 ms: a tick this late means the host stalled, and the parent is not judged on it. */
const STALL_MS = 1_000;

export class ParentEnd {
  readonly activations = new Map<number, HostActivation>();
  private readonly carrier: RedisCarrier;
  private readonly link: Link<ToHost, ToParent>;
  private heartbeat: Heartbeat<string>;
  /** The views this parent placed here (src/queue/shared-views.ts). */
  private readonly views = new KnownViews();

  constructor(
    channel: PeerChannel,
    readonly parent: string,
    private timeoutMs: number,
    private readonly log: (line: string) => void,
    /** A `place` frame: the parent hands this host an activation directly (it is the job's data). */
    private readonly placed: (end: ParentEnd, job: JobData) => void = (end, job) =>
      end.send({ kind: 'full', activation: job.a }),
  ) {
    this.carrier = redisCarrier(channel, parent);
    this.heartbeat = new Heartbeat(timeoutMs, STALL_MS);
    this.link = new Link<ToHost, ToParent>(
      this.carrier,
      {
        accept: (raw) => {
          const frame = readHostFrame(raw);
          return frame && this.fromParent(frame) ? frame : undefined;
        },
        frame: (frame) => this.onFrame(frame),
        invalid: () => this.log(`brood host: a malformed frame from parent ${parent} was dropped`),
        closed: () => undefined,
      },
      REDIS_LINK,
    );
  }

  /** A job from the parent is news of it: a parent judged silent earlier starts afresh. */
  heardFrom(timeoutMs: number): void {
    if (timeoutMs !== this.timeoutMs) {
      this.timeoutMs = timeoutMs;
      this.heartbeat = new Heartbeat(timeoutMs, STALL_MS);
    }
    this.heartbeat.clear();
  }

  deliver(frames: unknown[]): void {
    this.carrier.deliver(frames);
  }

  send(frame: ToParent): void {
    this.link.send(frame);
  }

  endpoint(a: number) {
    return this.link.endpoint(a);
  }

  /** The activation's frames go nowhere from now on. */
  drop(a: number): void {
    this.activations.delete(a);
    this.link.drop(a);
  }

  flush(): void {
    this.link.flush();
  }

  close(): void {
    this.link.close();
  }

  /** Judges the parent's silence (heard: batches from it), and beats every quarter timeout while it has activations here. */
  tick(now: number): 'silent' | 'idle' | 'alive' {
    const silent = this.heartbeat.silent([[this.parent, this.carrier.heard]], now).length > 0;
    if (this.activations.size === 0) return silent ? 'idle' : 'alive';
    if (silent) return 'silent';
    if (this.heartbeat.beatDue(now)) this.send({ kind: 'beat' });
    return 'alive';
  }

  get silentForMs(): number {
    return this.timeoutMs;
  }

  private fromParent(frame: ToHost): boolean {
    if (!FROM_PARENT.has(frame.kind)) return false;
    if (frame.kind === 'rpc') return isGatewayAnswer(frame.message);
    // A placed job is this parent's own activation, like a job it queued.
    if (frame.kind === 'place')
      return isJobData(frame.job) && frame.job.a === frame.activation && frame.job.parent === this.parent;
    return true;
  }

  private onFrame(frame: ToHost): void {
    if (frame.kind === 'place') {
      const job = this.views.resolve(frame.job as JobData, frame.view);
      if (job) this.placed(this, job);
      else this.send({ kind: 'full', activation: frame.activation });
      return;
    }
    if (frame.kind === 'beat' || frame.kind === 'init' || frame.kind === 'start' || frame.kind === 'rpc') return;
    const activation = this.activations.get(frame.activation);
    if (!activation) return;
    if (frame.kind === 'cells') activation.setCells(frame.values);
    else if (frame.kind === 'cancel') activation.cancel(frame.turn);
    else if (frame.kind === 'stop') activation.forceStop(frame.reason);
    else if (frame.kind === 'gone') activation.sever('the parent no longer runs this activation');
  }
}
