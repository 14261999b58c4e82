/**
 * A host's end of its link to one parent (the same link protocol as a pool thread's, over a Redis
 * carrier): the activations it runs for that parent, the frames the parent sends them (comlink
 * answers, cancel, cells, stop, gone), and the heartbeat both ways, the parent's silence judged by the
 * one SilenceJudge rule (src/wire/silence.ts). The parent is another process behind Redis: every
 * frame is checked whole, and an `rpc` frame must be a comlink answer (nothing else is served here).
 */
import { isGatewayAnswer } from '../wire/gateway.js';
import { Link } from '../wire/link.js';
import { type HostFrame, hostFrame, type ParentFrame } from '../wire/frames.js';
import { type PeerChannel, REDIS_LINK, type RedisCarrier, redisCarrier } from '../wire/redis-carrier.js';
import { SilenceJudge } from '../wire/silence.js';
import type { HostActivation } from './host-activation.js';
import { isJobData, type JobData } from './job.js';
import { KnownViews } from './shared-views.js';

const FROM_PARENT = new Set(['rpc', 'cancel', 'cells', 'stop', 'gone', 'beat', 'place']);

export class ParentEnd {
  readonly activations = new Map<number, HostActivation>();
  private readonly carrier: RedisCarrier;
  private readonly link: Link<HostFrame, ParentFrame>;
  private silence: SilenceJudge<string>;
  private lastBeat = 0;
  /** The views this parent placed here (src/queue/shared-views.ts). */
  private readonly views = new KnownViews();

  constructor(
    channel: PeerChannel,
    readonly parent: string,
    private timeoutMs: number,
    private readonly log: (line: string) => void,
    /** A `place` frame: the parent hands this host an activation directly (it is the job's data). */
    private readonly placed: (end: ParentEnd, job: JobData) => void = (end, job) => end.send({ k: 'full', a: job.a }),
  ) {
    this.carrier = redisCarrier(channel, parent);
    this.silence = new SilenceJudge(timeoutMs);
    this.link = new Link<HostFrame, ParentFrame>(
      this.carrier,
      {
        accept: (raw) => (hostFrame.check(raw) && this.fromParent(raw as HostFrame) ? (raw as HostFrame) : undefined),
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
      this.silence = new SilenceJudge(timeoutMs);
    }
    this.silence.clear();
  }

  deliver(frames: unknown[]): void {
    this.carrier.deliver(frames);
  }

  send(frame: ParentFrame): void {
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

  /**
   * Judges the parent's silence (heard: batches from it), and beats every quarter timeout while it
   * has activations here. `stalled`: this process was, so the parent is not judged on that silence.
   */
  tick(now: number, stalled: boolean): 'silent' | 'idle' | 'alive' {
    if (stalled) this.silence.clear();
    const silent = this.silence.judge([[this.parent, this.carrier.heard]], now).length > 0;
    if (this.activations.size === 0) return silent ? 'idle' : 'alive';
    if (silent) return 'silent';
    if (now - this.lastBeat >= this.timeoutMs / 4) {
      this.lastBeat = now;
      this.send({ k: 'beat' });
    }
    return 'alive';
  }

  get silentForMs(): number {
    return this.timeoutMs;
  }

  private fromParent(frame: HostFrame): boolean {
    if (!FROM_PARENT.has(frame.k)) return false;
    if (frame.k === 'rpc') return isGatewayAnswer(frame.m);
    // A placed job is this parent's own activation, like a job it queued.
    if (frame.k === 'place') return isJobData(frame.job) && frame.job.a === frame.a && frame.job.parent === this.parent;
    return true;
  }

  private onFrame(frame: HostFrame): void {
    if (frame.k === 'place') {
      const job = this.views.resolve(frame.job as JobData, frame.view);
      if (job) this.placed(this, job);
      else this.send({ k: 'full', a: frame.a });
      return;
    }
    if (frame.k === 'beat' || frame.k === 'init' || frame.k === 'start' || frame.k === 'rpc') return;
    const activation = this.activations.get(frame.a);
    if (!activation) return;
    if (frame.k === 'cells') activation.setCells(frame.v);
    else if (frame.k === 'cancel') activation.cancel(frame.turn);
    else if (frame.k === 'stop') activation.forceStop(frame.reason);
    else if (frame.k === 'gone') activation.sever('the parent no longer runs this activation');
  }
}
