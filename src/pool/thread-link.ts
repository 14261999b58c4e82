/**
 * The parent's end of one pool thread's link (driver-link.ts): activations start on it with a `start`
 * frame after setup, and the thread gets the watch board once, in `init`.
 */
import type { Worker } from 'node:worker_threads';
import { namedFrame, type ToParent } from '../wire/frames.js';
import type { Carrier } from '../wire/link.js';
import type { DriverPlan } from '../wire/protocol.js';
import { SentViews } from '../wire/view-numbers.js';
import { DriverLink, type PlacedActivation } from './driver-link.js';

export { outcomeEnd, type PlacedActivation } from './driver-link.js';

const THREAD_FRAMES = new Set(['rpc', 'log', 'end']);

/**
 * Frames of one thread's batch the parent handles per turn of its event loop. One batch can start a
 * lot of work: a parent driver's 64 delegation calls arrive together, and each starts a child whose
 * setup (session, plan, placement) runs as microtasks that never reach real I/O, so handling them all
 * at once blocked the host's event loop for 10+ ms (its timers, sockets and the other threads'
 * batches waited). Pool threads handle their batches whole: what arrives there resumes drivers that
 * are waiting for it, and deferring those behind the thread's own timers would re-synchronise them.
 */
export const FRAMES_PER_TURN = 8;

export class ThreadLink extends DriverLink<ThreadLink> {
  /** The plan views this thread was sent: a fan-out's children share one copy there. */
  private readonly views = new SentViews();

  constructor(
    readonly threadId: number,
    readonly worker: Worker | undefined,
    carrier: Carrier,
    board: SharedArrayBuffer,
    onClosed: (thread: ThreadLink) => void,
    /** The thread's last activation was released. */
    onIdle: (thread: ThreadLink) => void = () => undefined,
    sliceMs?: number,
  ) {
    super(carrier, { closed: onClosed, idle: onIdle }, { framesPerTurn: FRAMES_PER_TURN, sliceMs });
    this.link.send({ kind: 'init', board });
  }

  start(entry: PlacedActivation, plan: DriverPlan): void {
    this.attach(entry);
    const numbered = this.views.number(plan);
    this.link.send(
      numbered.view === undefined
        ? { kind: 'start', activation: entry.token, plan }
        : { kind: 'start', activation: entry.token, plan: numbered.plan, view: numbered.view },
    );
  }

  /** Frame kind and activation id only: payloads are checked where they are used (an `rpc` call: DriverLink.accept). */
  protected shape(raw: unknown): ToParent | undefined {
    if (typeof raw !== 'object' || raw === null) return undefined;
    const frame = namedFrame(raw) as { kind?: unknown; activation?: unknown };
    if (!THREAD_FRAMES.has(frame.kind as string)) return undefined;
    return Number.isSafeInteger(frame.activation) && (frame.activation as number) > 0 ? (frame as ToParent) : undefined;
  }
}
