/**
 * The parent's end of one link to a driver host — a pool thread (thread-link.ts) or a `brood host`
 * process over Redis (src/queue/host-link.ts): the activations placed there, their gateways (served
 * as comlink endpoints on the link), their one-way event logs, and their ends. The link holds the
 * process open only while an activation runs on it.
 */

import type { ToHost, ToParent } from '../wire/frames.js';
import { type GatewayRemote, isGatewayCall } from '../wire/gateway.js';
import { type Carrier, Link, type LinkOptions } from '../wire/link.js';
import { type ActivationOutcome, activationOutcome } from '../wire/protocol.js';
import type { ActivationEnd } from '../wire/runner.js';
import { serveGateway } from './gateway-server.js';

export interface PlacedActivation {
  token: number;
  agentId: string;
  quarantined: boolean;
  gateway: GatewayRemote;
  /** Settles the activation (first call wins). */
  settle(end: ActivationEnd | { outcome: unknown }): void;
}

/** A frame that belongs to one activation. */
export type ActivationFrame = Extract<ToParent, { activation: number }>;

export interface DriverLinkHooks<Self> {
  /** The carrier closed (the thread exited, the link was closed). */
  closed(link: Self): void;
  /** The link's last activation was released. */
  idle?(link: Self): void;
}

export abstract class DriverLink<Self = unknown> {
  readonly live = new Map<number, PlacedActivation>();
  protected readonly link: Link<ToParent, ToHost>;

  constructor(carrier: Carrier, hooks: DriverLinkHooks<Self>, options: LinkOptions = {}) {
    const self = this as unknown as Self;
    this.link = new Link<ToParent, ToHost>(
      carrier,
      {
        // Frames of activations not live here (a late `end` after the parent ended one, comlink's late
        // releases) are turned away here, so they cost the parent no turn of its event loop.
        accept: (raw) => this.accept(raw),
        frame: (frame) => this.onFrame(frame),
        // Malformed, not a gateway call, or for an activation gone: nobody to fail (a call refused here
        // is never answered; only a thread that no longer runs brood's driver host sends one).
        invalid: () => undefined,
        closed: () => hooks.closed(self),
      },
      options,
    );
    this.idle = () => hooks.idle?.(self);
    this.link.setActive(false);
  }

  private readonly idle: () => void;

  get closed(): boolean {
    return this.link.closed;
  }

  get load(): number {
    return this.live.size;
  }

  /** Serves an activation's gateway on this link; its frames are accepted from now on. */
  attach(entry: PlacedActivation): void {
    this.live.set(entry.token, entry);
    serveGateway(this.link.endpoint(entry.token), entry.gateway);
    if (this.live.size === 1) this.link.setActive(true);
  }

  cancel(token: number, turn: number | undefined): void {
    this.link.send(
      turn === undefined ? { kind: 'cancel', activation: token } : { kind: 'cancel', activation: token, turn },
    );
  }

  /** Forgets an activation (ended, or judged after a death). */
  release(token: number): void {
    if (!this.live.delete(token)) return;
    this.link.drop(token);
    if (this.live.size > 0) return;
    this.link.setActive(false);
    this.idle();
  }

  close(): void {
    this.link.close();
  }

  /**
   * The frame, if it is well formed and its activation is live here (see `stray`). An `rpc` frame
   * must be a call of one gateway method with plain arguments (`isGatewayCall`), which is all a driver
   * host sends: comlink's `expose`, which serves it, would also read, set or construct along any
   * property path from the served gateway (a SET up its prototype chain wrote to the parent's
   * Object.prototype; a GET of a function made the link's next batch uncloneable, an uncaught
   * DataCloneError). The other end is not trusted to keep to that, so nothing else gets through.
   */
  private accept(raw: unknown): ToParent | undefined {
    const frame = this.shape(raw);
    if (frame?.kind === 'rpc' && !isGatewayCall(frame.message)) return undefined;
    if (frame === undefined || !('activation' in frame) || frame.kind === 'hello' || this.live.has(frame.activation))
      return frame;
    this.stray(frame);
    return undefined;
  }

  /** Checks a frame's shape and names its keys; payloads may be left to where they are used (gateway, outcome). */
  protected abstract shape(raw: unknown): ToParent | undefined;

  /** A well-formed frame of an activation not live on this link. */
  protected stray(_frame: ActivationFrame): void {}

  /** Frames other than an activation's log and end (a queue host's hello, beat, room and full). */
  protected other(_frame: ToParent): void {}

  protected log(entry: PlacedActivation, events: Extract<ToParent, { kind: 'log' }>['events']): void {
    void entry.gateway.log(events);
  }

  private onFrame(frame: ToParent): void {
    if (frame.kind !== 'log' && frame.kind !== 'end') {
      this.other(frame);
      return;
    }
    const entry = this.live.get(frame.activation);
    if (!entry) return; // late frames of an activation already judged
    if (frame.kind === 'log') this.log(entry, frame.events);
    else entry.settle({ outcome: frame.outcome });
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
  if (outcome.ok) return { ok: true, end: { kind: 'finished' } };
  if (outcome.recover) return { ok: false, end: { kind: 'recover' } };
  const stopReason = outcome.stopReason ?? 'error';
  return { ok: false, end: { kind: 'failed', stopReason, diagnostic: outcome.error.message } };
}

/** The other way round: how a queue host reports the end its local pool gave an activation. */
export function endOutcome(end: ActivationEnd): ActivationOutcome {
  if (end.kind === 'finished') return { ok: true };
  if (end.kind === 'recover')
    return { ok: false, recover: true, error: { code: 'WORKER_CRASHED', message: 'the driver host lost its thread' } };
  return { ok: false, stopReason: end.stopReason, error: { code: 'INTERNAL', message: end.diagnostic } };
}
