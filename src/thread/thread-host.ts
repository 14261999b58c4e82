/**
 * The driver host of one pool thread: the thread's end of its link. It runs every activation the
 * parent starts on this thread (after setup, with its plan), serves cancellation, and reports each
 * activation's end after all of that activation's other frames.
 */
import type { Driver } from '../driver/loop.js';
import { encodeError } from '../errors.js';
import type { ModelProviderConfig } from '../models/types.js';
import { hostFrame, namedFrame, readHostFrame, type ToHost, type ToParent } from '../wire/frames.js';
import { type Carrier, Link } from '../wire/link.js';
import type { ActivationOutcome, DriverPlan } from '../wire/protocol.js';
import { KnownViews } from '../wire/view-numbers.js';
import { DriverFactory } from './driver-factory.js';
import { GatewayClient } from './gateway-client.js';
import { runWatched } from './thread-watch.js';

/** How long a thread stays idle after an activation ends before it counts as warm. */
const WARM_IDLE_MS = 500;
/** A thread that is never idle counts as warm after this many activations. */
const WARM_AFTER_ENDS = 64;

interface Running {
  gateway: GatewayClient;
  driver?: Driver;
  /** A cancel that arrived before the driver existed (its adapter was still loading). */
  cancelled?: { turn?: number };
}

export class ThreadHost {
  private readonly link: Link<ToHost, ToParent>;
  private readonly drivers: DriverFactory;
  private readonly running = new Map<number, Running>();
  private board: SharedArrayBuffer | undefined;
  /** The plan views the parent sent on this link: drivers with the same view share this one copy. */
  private readonly views = new KnownViews();
  private warm: { callback?: () => void; ended: number; timer?: NodeJS.Timeout } = { ended: 0 };

  constructor(carrier: Carrier, models: readonly ModelProviderConfig[]) {
    this.drivers = new DriverFactory(models);
    this.link = new Link<ToHost, ToParent>(carrier, {
      accept: readHostFrame,
      frame: (frame) => this.onFrame(frame),
      // The parent is trusted code; a frame it cannot have sent means a broken carrier: say so loudly.
      invalid: (raw) => this.onInvalid(raw),
      closed: () => this.failAll("the parent closed this thread's link"),
    });
  }

  /**
   * Calls `callback` once this thread has ended an activation and stayed idle for a moment (or has
   * ended many while never idle): by then the driver's hot functions are compiled.
   */
  onceWarm(callback: () => void): void {
    this.warm.callback = callback;
  }

  private onFrame(frame: ToHost): void {
    if (frame.kind === 'init') this.board = frame.board;
    else if (frame.kind === 'start') this.startNumbered(frame.activation, frame.plan, frame.view);
    else if (frame.kind === 'cancel') this.cancel(frame.activation, frame.turn);
  }

  private onInvalid(raw: unknown): void {
    if (typeof raw !== 'object' || raw === null) return;
    const a = (namedFrame(raw) as { activation?: unknown }).activation;
    if (typeof a !== 'number' || !Number.isSafeInteger(a) || a <= 0) return;
    // A start whose plan is malformed still gets an end, so the parent never waits for it.
    let message = 'malformed frame from the parent';
    try {
      hostFrame.parse(raw, 'start');
    } catch (error) {
      message = (error as Error).message;
    }
    if (!this.running.has(a))
      this.link.send({ kind: 'end', activation: a, outcome: { ok: false, error: { code: 'INTERNAL', message } } });
  }

  private cancel(a: number, turn: number | undefined): void {
    const entry = this.running.get(a);
    if (!entry) return;
    if (entry.driver) entry.driver.cancel(turn);
    else entry.cancelled = turn === undefined ? {} : { turn };
  }

  /** A view named by a number this thread was never sent is the parent's bug: that activation fails. */
  private startNumbered(a: number, sent: DriverPlan, view: number | undefined): void {
    const plan = this.views.resolve(sent, view);
    if (plan) this.start(a, plan);
    else {
      const message = `the parent named plan view ${view}, which this thread was not sent`;
      this.link.send({ kind: 'end', activation: a, outcome: { ok: false, error: { code: 'INTERNAL', message } } });
    }
  }

  private start(a: number, plan: DriverPlan): void {
    const gateway = new GatewayClient(
      this.link.endpoint(a),
      (events) => this.link.send({ kind: 'log', activation: a, events }),
      () => this.link.sent(),
    );
    const entry: Running = { gateway };
    this.running.set(a, entry);
    // A chain, not an async function: nothing suspended here for as long as the activation runs.
    // (create() is async, so even its synchronous failures arrive as a rejection.)
    const run = (): Promise<void> =>
      this.drivers.create(plan, gateway.host).then((driver) => {
        entry.driver = driver;
        if (entry.cancelled) driver.cancel(entry.cancelled.turn);
        return driver.runActivation();
      });
    const board = this.board;
    void (board ? runWatched(board, a, run) : run()).then(
      () => this.end(a, { ok: true }),
      (error: unknown) => this.end(a, { ok: false, error: encodeError(error) }),
    );
  }

  private end(a: number, outcome: ActivationOutcome): void {
    this.running.delete(a);
    this.link.send({ kind: 'end', activation: a, outcome });
    this.link.drop(a);
    this.warm.ended++;
    if (this.warm.callback && !this.warm.timer)
      this.warm.timer = setTimeout(() => this.checkWarm(), WARM_IDLE_MS).unref();
  }

  private checkWarm(): void {
    this.warm.timer = undefined;
    const callback = this.warm.callback;
    if (!callback) return;
    if (this.running.size > 0 && this.warm.ended < WARM_AFTER_ENDS) return; // the next end re-arms it
    this.warm.callback = undefined;
    callback();
  }

  private failAll(reason: string): void {
    for (const entry of this.running.values()) entry.gateway.fail(reason);
  }
}
