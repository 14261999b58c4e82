/**
 * The parent's end of its link to one `brood host` (driver-link.ts over a Redis carrier). Activations
 * are not started on it: their plans go out as jobs, and whichever host takes one says `hello` on its
 * link, which binds the activation there (the runner decides, queue-runner.ts). The host is another
 * process behind Redis, so every frame is checked whole, and an `rpc` frame must be a plain call of a
 * gateway method (comlink alone would let it read or set any property of the served gateway).
 */
import { type ActivationFrame, DriverLink, type PlacedActivation } from '../pool/driver-link.js';
import { type HostIdentity, readParentFrame, type ToHost, type ToParent } from '../wire/frames.js';
import { REDIS_LINK, type RedisCarrier } from '../wire/redis-carrier.js';
import { SentViews } from './shared-views.js';

export interface HostLinkEvents {
  /** The host took the activation's job. */
  hello(link: HostLink, a: number): void;
  /** A frame of an activation this link does not carry (its hello was lost, or it is stale). */
  stray(link: HostLink, frame: ActivationFrame): void;
  /** The host had no room for an activation placed on it: it never started there. */
  full?(link: HostLink, a: number): void;
  closed(link: HostLink): void;
}

export class HostLink extends DriverLink<HostLink> {
  /** Who the host is, from its hellos: its model requests record it. */
  identity: HostIdentity = { name: '', pid: 0 };
  /**
   * How many more activations the host said it can take from this parent as `place` frames (it said
   * so when one of ours ended there; advisory: a host with no room after all answers `full`).
   */
  room = 0;
  /** When the host last said how much room it has. */
  roomAt = 0;
  /** The views placed on this host so far (a `place` frame carries each once). */
  readonly views = new SentViews();

  constructor(
    private readonly carrier: RedisCarrier,
    private readonly events: HostLinkEvents,
  ) {
    // A host's batch is handled whole (no FRAMES_PER_TURN): its frames are children's steps, not a root
    // driver's burst of delegations, and the answers to one batch then leave together, in one LPUSH.
    super(carrier, { closed: (link) => events.closed(link) }, REDIS_LINK);
  }

  /** The host's channel endpoint. */
  get endpoint(): string {
    return this.carrier.peer;
  }

  /** Batches heard from the host so far (its silence is judged on it). */
  get heard(): number {
    return this.carrier.heard;
  }

  /** A batch from the host arrived (the runner's channel read it). */
  deliver(frames: unknown[]): void {
    this.carrier.deliver(frames);
  }

  send(frame: ToHost): void {
    this.link.send(frame);
  }

  /** Sends what is queued now (closing: the last frames must leave before the connection does). */
  flush(): void {
    this.link.flush();
  }

  protected shape(raw: unknown): ToParent | undefined {
    return readParentFrame(raw);
  }

  protected override stray(frame: ActivationFrame): void {
    this.events.stray(this, frame);
  }

  protected override other(frame: ToParent): void {
    if (frame.kind === 'room') {
      this.room = frame.count;
      this.roomAt = Date.now();
    } else if (frame.kind === 'full') {
      this.room = 0;
      this.events.full?.(this, frame.activation);
    } else if (frame.kind === 'hello') {
      this.identity = frame.host;
      this.events.hello(this, frame.activation);
    }
  }

  protected override log(entry: PlacedActivation, events: Extract<ToParent, { kind: 'log' }>['events']): void {
    void entry.gateway.log(withHost(events, this.identity));
  }
}

/** `model/request` records which host ran it. */
function withHost<E extends { type: string; data: Record<string, unknown> }>(events: E[], host: HostIdentity): E[] {
  return events.map((event) => (event.type === 'model/request' ? { ...event, data: { ...event.data, host } } : event));
}
