/**
 * The parent's end of one pool thread's link: the activations placed on that thread, their gateways
 * (served as comlink endpoints on the link), their one-way event logs, and their ends. The link holds
 * the process open only while an activation runs on it.
 */
import type { Worker } from 'node:worker_threads';
import { Link, type Carrier } from '../wire/link.js';
import type { GatewayRemote } from './gateway-client.js';
import { serveGateway } from './gateway-server.js';
import { activationOutcome, type ActivationOutcome, type HostFrame, type ParentFrame } from './protocol.js';
import type { DriverPlan } from '../driver/types.js';
import type { ActivationEnd } from './runner.js';

export interface PlacedActivation {
  token: number;
  agentId: string;
  quarantined: boolean;
  gateway: GatewayRemote;
  /** Settles the activation (first call wins). */
  settle(end: ActivationEnd | { outcome: unknown }): void;
}

const THREAD_FRAMES = new Set(['rpc', 'log', 'end']);

/**
 * Frames of one thread's batch the parent handles per turn of its event loop. One batch can start a
 * lot of work: a parent driver's 64 delegation calls arrive together, and each starts a child whose
 * setup (session, plan, placement) runs as microtasks that never reach real I/O, so handling them all
 * at once blocked the host's event loop for 10+ ms (its timers, sockets and the other threads'
 * batches waited). Pool threads handle their batches whole: what arrives there resumes drivers that
 * are waiting for it, and deferring those behind the thread's own timers would re-synchronise them.
 */
const FRAMES_PER_TURN = 8;

/** Frame kind and activation id only: payloads are checked where they are used (gateway, outcome). */
function acceptFrame(raw: unknown): ParentFrame | undefined {
  const frame = raw as { k?: unknown; a?: unknown } | null;
  if (typeof frame !== 'object' || frame === null || !THREAD_FRAMES.has(frame.k as string)) return undefined;
  return Number.isSafeInteger(frame.a) && (frame.a as number) > 0 ? (raw as ParentFrame) : undefined;
}

export class ThreadLink {
  readonly live = new Map<number, PlacedActivation>();
  private readonly link: Link<ParentFrame, HostFrame>;

  constructor(
    readonly threadId: number,
    readonly worker: Worker | undefined,
    carrier: Carrier,
    board: SharedArrayBuffer,
    private readonly onClosed: (thread: ThreadLink) => void,
    /** The thread's last activation was released. */
    private readonly onIdle: (thread: ThreadLink) => void = () => undefined,
  ) {
    this.link = new Link<ParentFrame, HostFrame>(
      carrier,
      {
        // Frames of activations already settled (a late `end` after the parent ended one, comlink's
        // late releases) are turned away here, so they cost the parent no turn of its event loop.
        accept: (raw) => {
          const frame = acceptFrame(raw);
          return frame && this.live.has(frame.a) ? frame : undefined;
        },
        frame: (frame) => this.onFrame(frame),
        invalid: () => undefined, // malformed, or for an activation gone: nobody to fail
        closed: () => this.onClosed(this),
      },
      { framesPerTurn: FRAMES_PER_TURN },
    );
    this.link.setActive(false);
    this.link.send({ k: 'init', board });
  }

  get closed(): boolean {
    return this.link.closed;
  }

  get load(): number {
    return this.live.size;
  }

  start(entry: PlacedActivation, plan: DriverPlan): void {
    this.live.set(entry.token, entry);
    serveGateway(this.link.endpoint(entry.token), entry.gateway);
    this.link.send({ k: 'start', a: entry.token, plan: plan as never });
    if (this.live.size === 1) this.link.setActive(true);
  }

  cancel(token: number, turn: number | undefined): void {
    this.link.send(turn === undefined ? { k: 'cancel', a: token } : { k: 'cancel', a: token, turn });
  }

  /** Forgets an activation (ended, or judged after a death). */
  release(token: number): void {
    if (!this.live.delete(token)) return;
    this.link.drop(token);
    if (this.live.size > 0) return;
    this.link.setActive(false);
    this.onIdle(this);
  }

  close(): void {
    this.link.close();
  }

  private onFrame(frame: ParentFrame): void {
    const entry = this.live.get(frame.a);
    if (!entry) return; // late frames of an activation already judged
    if (frame.k === 'log') void entry.gateway.log(frame.events);
    else if (frame.k === 'end') entry.settle({ outcome: frame.outcome });
  }
}

/** A driver host's report of how an activation ended, checked like any message from a thread. */
export function outcomeEnd(raw: unknown): { end: ActivationEnd; ok: boolean } {
  let outcome: ActivationOutcome;
  try {
    outcome = activationOutcome.parse(raw, 'end');
  } catch {
    return {
      ok: false,
      end: { kind: 'failed', stopReason: 'error', diagnostic: 'a driver host reported a malformed outcome' },
    };
  }
  if (!outcome.ok)
    return { ok: false, end: { kind: 'failed', stopReason: 'error', diagnostic: outcome.error.message } };
  return { ok: true, end: { kind: 'finished' } };
}
