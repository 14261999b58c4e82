/**
 * One persistent link between the parent and one driver host (a pool thread), multiplexing every
 * activation on it by id, batching frames per tick in each direction. A link knows frames and
 * batches, never the transport: a Carrier moves whole batches in order (a MessagePort between threads
 * today; a socket or a Redis stream between processes later).
 *
 * comlink stays the RPC vocabulary: each activation gets a comlink Endpoint whose messages travel as
 * `rpc` frames of the link, so one postMessage carries the calls, results and events of many drivers.
 */
import type { Endpoint } from 'comlink';
import { shortFrame } from './frames.js';

export interface Carrier {
  /** Sends one batch; the other side receives batches whole and in order. */
  send(batch: unknown[]): void;
  onBatch(handler: (batch: unknown) => void): void;
  /** Called once when the other side is gone (thread exit, socket end) or close() was called. */
  onClose(handler: () => void): void;
  close(): void;
  /** Whether the link keeps the process alive (a parent holds its thread links only while drivers run). */
  setActive?(active: boolean): void;
  /**
   * Takes the next batch already waiting, synchronously (`undefined`: none, or the transport cannot).
   * It is the same queue `onBatch` reads, so order is kept.
   */
  poll?(): unknown;
}

/**
 * How long a side may work without exchanging with its carrier before it sends what it has queued
 * and takes what has arrived, instead of waiting for the end of the tick. Drivers on one thread wake
 * together (their timers or sockets are ready in the same phase of the event loop); without this, a
 * thread that spends 40 ms running four model steps back to back sends nothing and reads nothing
 * until all four are done, so the four wait on the parent together and wake together again (the
 * thread idles in lockstep), and the parent gets a wave's work in one lump instead of as it comes.
 * 0.5 ms measured best of 0, 0.25, 0.5, 1, 2 and 4 ms in interleaved fan-out runs (latency-only
 * N=256 P=64 ~4 % faster than 1 ms in 6 of 8 pairs; CPU fan-out alike for every value above 0).
 */
const SLICE_MS = 0.5;

export interface LinkOptions {
  /** Overrides SLICE_MS (tests: 0 exchanges at every send, a large value only at the end of each tick). */
  sliceMs?: number;
  /**
   * How many arrived frames one turn of the event loop handles; the rest of a long batch is handled
   * on the next turns, after whatever else is ready, in order. Unlimited by default.
   */
  framesPerTurn?: number;
}

/**
 * A frame as the ends of a link see it, its keys named (src/wire/frames.ts): its `kind`, and the
 * `activation` it belongs to. On the wire the keys are one letter; the link shortens them on sending.
 */
export interface Frame {
  kind?: string;
  activation?: number;
}

export interface LinkHandlers<In extends Frame> {
  /**
   * Checks one arriving frame and names its keys (readHostFrame, readParentFrame); `undefined` turns
   * it away (malformed, or nobody's: it goes to `invalid`).
   */
  accept(raw: unknown): In | undefined;
  /** Every accepted frame except `rpc` frames of an activation with an endpoint. */
  frame(frame: In): void;
  invalid(raw: unknown): void;
  closed(): void;
}

export class Link<In extends Frame, Out extends Frame> {
  private queue: unknown[] = [];
  private scheduled = false;
  private sentWaiters: (() => void)[] = [];
  private readonly endpoints = new Map<number, FrameEndpoint>();
  private isClosed = false;
  private closing = false;
  /** When this side last handed a batch to the carrier or took one from it. */
  private lastExchange = performance.now();
  private pumpQueued = false;
  private readonly sliceMs: number;
  private readonly framesPerTurn: number;
  /** Frames received and not handled yet (a long batch's rest), from `inboundHead` on. */
  private inbound: unknown[] = [];
  private inboundHead = 0;
  private inboundScheduled = false;

  constructor(
    private readonly carrier: Carrier,
    private readonly handlers: LinkHandlers<In>,
    options: LinkOptions = {},
  ) {
    this.sliceMs = options.sliceMs ?? SLICE_MS;
    this.framesPerTurn = options.framesPerTurn ?? Number.POSITIVE_INFINITY;
    carrier.onBatch((batch) => this.receive(batch));
    carrier.onClose(() => this.closedByCarrier());
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Queues a frame; frames queued together leave in one batch, at the end of the tick or, once this
   * side has worked a slice without exchanging (SLICE_MS), at the end of the current microtask.
   */
  send(frame: Out): void {
    this.enqueue(shortFrame(frame));
  }

  /** Queues a frame as it crosses (its keys short). */
  private enqueue(frame: object): void {
    if (this.isClosed) return;
    this.queue.push(frame);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (!this.pumpQueued && performance.now() - this.lastExchange >= this.sliceMs) this.queuePump();
  }

  private queuePump(): void {
    if (this.pumpQueued) return;
    // Once the microtasks queued so far have all run, not now: a tick (process.nextTick) queued from
    // a microtask runs only after the whole microtask queue has drained. So everything the work that
    // is running now sends (a driver's await chain: its events, then its endTurn or tool batch)
    // joins this batch, and frames that arrive are dispatched outside the caller's stack. A plain
    // microtask sent the first frame after every wake-up alone (the slice had passed while the
    // thread was idle), and the rest a tick later: two messages, two wake-ups, per model step.
    this.pumpQueued = true;
    queueMicrotask(() => process.nextTick(() => this.pump()));
  }

  /** Sends what is queued now (before a synchronous fault could lose it). */
  flush(): void {
    this.scheduled = false;
    this.sendQueued();
  }

  private sendQueued(): void {
    this.lastExchange = performance.now();
    const waiters = this.sentWaiters;
    this.sentWaiters = [];
    if (this.queue.length > 0 && !this.isClosed) {
      const batch = this.queue;
      this.queue = [];
      this.carrier.send(batch);
    }
    for (const resolve of waiters) resolve();
  }

  /**
   * Mid-tick exchange (see SLICE_MS): what has arrived is handled, then what is queued leaves. In that
   * order, so nothing that answers what this pump sends is handled before the caller's code runs on:
   * a driver that logs a model request and then starts it synchronously is past that point before
   * any reply (a cancel, say) can reach it, exactly as when frames leave at the end of the tick.
   */
  private pump(): void {
    this.pumpQueued = false;
    while (!this.isClosed) {
      const batch = this.carrier.poll?.();
      if (batch === undefined) break;
      this.receive(batch);
    }
    if (!this.isClosed) this.sendQueued();
  }

  /** Resolves once every frame queued so far has been handed to the carrier (or the link closed). */
  sent(): Promise<void> {
    if (this.queue.length === 0 || this.isClosed) return Promise.resolve();
    // Whoever waits here has work blocked on it (a model request): do not make it wait for the end
    // of the tick, which other drivers' synchronous work on this thread may delay by many ms.
    this.queuePump();
    return new Promise((resolve) => this.sentWaiters.push(resolve));
  }

  /** The comlink endpoint of activation `a`; its messages are this link's `rpc` frames. */
  endpoint(a: number): Endpoint {
    let endpoint = this.endpoints.get(a);
    if (!endpoint) {
      endpoint = new FrameEndpoint((m) => this.enqueue({ k: 'rpc', a, m }));
      this.endpoints.set(a, endpoint);
    }
    return endpoint;
  }

  /** Forgets an activation's endpoint: later frames for it are dropped, its comlink posts too. */
  drop(a: number): void {
    this.endpoints.get(a)?.close();
    this.endpoints.delete(a);
  }

  setActive(active: boolean): void {
    this.carrier.setActive?.(active);
  }

  close(): void {
    this.flush();
    this.carrier.close();
    this.closedByCarrier();
  }

  private receive(batch: unknown): void {
    this.lastExchange = performance.now();
    if (!Array.isArray(batch)) {
      this.handlers.invalid(batch);
      return;
    }
    if (this.inboundHead === this.inbound.length) {
      this.inbound = batch;
      this.inboundHead = 0;
    } else {
      for (const raw of batch) this.inbound.push(raw);
    }
    if (!this.inboundScheduled) this.handleInbound(this.framesPerTurn);
  }

  /**
   * Handles up to `limit` accepted frames; the rest on a later turn of the event loop. Frames that
   * `accept` turns away (malformed, or for an activation already gone) are not work and do not count:
   * a batch of them never leaves an immediate behind.
   */
  private handleInbound(limit: number): void {
    this.inboundScheduled = false;
    let handled = 0;
    while (this.inboundHead < this.inbound.length && !this.isClosed) {
      if (handled === limit) {
        this.inboundScheduled = true;
        setImmediate(() => this.handleInbound(this.framesPerTurn));
        return;
      }
      if (this.handleFrame(this.inbound[this.inboundHead++])) handled++;
    }
    this.inbound = [];
    this.inboundHead = 0;
  }

  /** Dispatches one frame; false when `accept` turned it away. */
  private handleFrame(raw: unknown): boolean {
    const frame = this.handlers.accept(raw);
    if (frame === undefined) {
      this.handlers.invalid(raw);
      return false;
    }
    const { kind, activation } = frame;
    if (kind === 'rpc' && activation !== undefined && this.endpoints.has(activation))
      this.endpoints.get(activation)?.deliver((frame as { message?: unknown }).message);
    else this.handlers.frame(frame);
    return true;
  }

  private closedByCarrier(): void {
    if (this.isClosed || this.closing) return;
    // Everything that arrived before the close is handled before it, as when each batch was handled whole.
    this.closing = true;
    this.handleInbound(Number.POSITIVE_INFINITY);
    this.isClosed = true;
    this.queue = [];
    for (const resolve of this.sentWaiters.splice(0)) resolve();
    for (const endpoint of this.endpoints.values()) endpoint.close();
    this.endpoints.clear();
    this.handlers.closed();
  }
}

type Listener = (event: { data: unknown }) => void;

/** A comlink Endpoint over a link: comlink's messages become frames, frames become its events. */
class FrameEndpoint implements Endpoint {
  /**
   * An array, replaced (never changed) on add and remove so delivery can walk it as it is: comlink
   * adds one listener per endpoint, and a Set's table is several times the size of a one-element array.
   */
  private listeners: readonly Listener[] = [];
  private open = true;

  constructor(private readonly post: (message: unknown) => void) {}

  postMessage(message: unknown): void {
    // A call or an answer may come after the activation ended: it has no one left to reach.
    if (this.open) this.post(message);
  }

  addEventListener(_type: string, listener: Parameters<Endpoint['addEventListener']>[1]): void {
    const added = listener as unknown as Listener;
    if (!this.listeners.includes(added)) this.listeners = [...this.listeners, added];
  }

  removeEventListener(_type: string, listener: Parameters<Endpoint['addEventListener']>[1]): void {
    const removed = listener as unknown as Listener;
    if (this.listeners.includes(removed)) this.listeners = this.listeners.filter((each) => each !== removed);
  }

  deliver(data: unknown): void {
    const event = { data };
    for (const listener of this.listeners) listener(event);
  }

  close(): void {
    this.open = false;
    this.listeners = [];
  }
}
