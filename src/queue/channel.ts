/**
 * The gateway channel between a parent runner and the hosts: one Redis list per endpoint, read by a
 * BRPOP loop on a dedicated blocking connection (Redis pub/sub would drop frames; a list keeps them
 * until read). Frames are batched per tick and per destination, one LPUSH per batch.
 *
 * Every batch carries its sender's epoch (drawn when the channel is made: its hello) and a
 * per-destination sequence number that restarts with each epoch. A receiver that sees a gap (a batch
 * lost with a restarted Redis, a send that failed, or a forged number) cannot trust anything in flight
 * between the two endpoints and reports it once; the runner then recovers every activation the pair
 * shared. It then forgets the pair, so the sender's next batch starts it again: one bad batch costs
 * at most one re-plan, never every later batch (a forged high number used to make a receiver drop
 * everything after it as "already seen").
 *
 * With a secret, batches are sealed (batch-seal.ts); one that fails its seal is dropped before any of
 * this, and counted in one diagnostic line per burst.
 */
import { randomUUID } from 'node:crypto';
import { array, int, object, optional, str, unknown } from '../declare.js';
import { errorMessage } from '../errors.js';
import { type Wire, type WireType, wire } from '../wire/wire-type.js';
import { batchSeal } from './batch-seal.js';
import type { RedisClient } from './redis.js';

/** One list entry's payload, checked by the compiled check (zod would copy every frame of the batch). */
const envelopeDecl = object({
  from: str({ min: 1, max: 200 }),
  epoch: optional(str({ min: 1, max: 64 })),
  seq: int('positive'),
  frames: array(unknown()),
});
type Envelope = Wire<typeof envelopeDecl>;
const envelope: WireType<Envelope> = wire(envelopeDecl);

/** The most batches one read takes from the list. */
const READ_COUNT = 256;

/** How long rejected batches are counted before the one line that reports them. */
const REJECTED_REPORT_MS = 1_000;

export interface ChannelHandlers {
  /** The frames of one batch from `from`, in order. */
  batch(from: string, frames: unknown[]): void;
  /** A batch between this endpoint and `peer` was lost (either direction). */
  broken(peer: string, reason: string): void;
  /** Something arrived that is no batch, or batches failed their seal (reported, then dropped). */
  malformed(reason: string): void;
}

interface PeerSequence {
  epoch: string | undefined;
  seen: number;
  /** After a batch out of order: the next one (any number) takes the pair up again. */
  loose: boolean;
}

export class Channel {
  private readonly outgoing = new Map<string, unknown[]>();
  private readonly sentSeq = new Map<string, number>();
  private readonly seen = new Map<string, PeerSequence>();
  private readonly epoch = randomUUID();
  private readonly seal;
  /** Batches that failed their seal: in all, and since the last report. */
  private rejectedTotal = 0;
  private rejectedPending: { count: number; firstFrom: string } | undefined;
  private rejectedTimer: NodeJS.Timeout | undefined;
  private readonly expiresSet = new Map<string, number>();
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;
  private reading: Promise<void> | undefined;
  /** Whether Redis has BLMPOP (7.0); unknown until the first read. */
  private hasBlmpop: boolean | undefined;

  constructor(
    readonly self: string,
    private readonly commands: RedisClient,
    private readonly blocking: RedisClient,
    private readonly keyOf: (endpoint: string) => string,
    private readonly ttlMs: number,
    private readonly handlers: ChannelHandlers,
    secret?: string,
  ) {
    this.seal = batchSeal(secret);
  }

  /** How many batches this endpoint dropped because they failed their seal. */
  get rejected(): number {
    return this.rejectedTotal;
  }

  start(): void {
    this.reading ??= this.readLoop();
  }

  send(to: string, frame: unknown): void {
    if (this.closed) return;
    let queue = this.outgoing.get(to);
    if (!queue) {
      queue = [];
      this.outgoing.set(to, queue);
    }
    queue.push(frame);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /**
   * Sends one batch to `to` now, as one list entry (a link's carrier: the link has batched already).
   * Frames queued with `send` for `to` leave first, in the same entry.
   */
  sendBatch(to: string, frames: unknown[]): void {
    if (this.closed) return;
    const queued = this.outgoing.get(to);
    this.outgoing.delete(to);
    this.push(to, queued ? [...queued, ...frames] : frames);
  }

  /** Forgets a peer (its sequence numbers); the next batch from it starts a new pair. */
  forget(peer: string): void {
    this.sentSeq.delete(peer);
    this.seen.delete(peer);
  }

  /** Sends what `send` queued; resolves once every batch handed to Redis so far is written (or failed). */
  flush(): Promise<void> {
    this.scheduled = false;
    for (const [to, frames] of this.outgoing) this.push(to, frames);
    this.outgoing.clear();
    return Promise.all(this.inFlight).then(() => undefined);
  }

  private push(to: string, frames: unknown[]): void {
    const seq = (this.sentSeq.get(to) ?? 0) + 1;
    this.sentSeq.set(to, seq);
    const key = this.keyOf(to);
    const body = this.seal.seal(to, JSON.stringify({ from: this.self, epoch: this.epoch, seq, frames }));
    const failed = (error: unknown): void => {
      if (!this.closed) this.handlers.broken(to, `a batch to ${to} was not delivered (${errorMessage(error)})`);
    };
    const sent = this.commands.lpush(key, body).then(() => undefined, failed);
    this.inFlight.add(sent);
    void sent.finally(() => this.inFlight.delete(sent));
    // The list of an endpoint that went away expires; renewing that once a second is enough.
    const now = Date.now();
    if ((this.expiresSet.get(to) ?? 0) < now - 1_000) {
      this.expiresSet.set(to, now);
      void this.commands.pexpire(key, this.ttlMs).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    this.reportRejected();
    // Ends a BRPOP that is waiting: its connection goes, and the loop sees `closed`. (A BRPOP still
    // waiting for a first connection is never settled by ioredis; nothing waits for it.)
    this.blocking.disconnect(false);
    if (this.commands.status === 'ready') await this.commands.del(this.keyOf(this.self)).catch(() => undefined);
  }

  private async readLoop(): Promise<void> {
    const key = this.keyOf(this.self);
    while (!this.closed) {
      let bodies: string[];
      try {
        bodies = await this.pop(key);
      } catch {
        if (this.closed) return;
        // The connection dropped (ioredis reconnects by itself); a short pause avoids a hot loop.
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      for (const body of bodies) this.receive(body);
    }
  }

  /**
   * Waits for the list's first entry and takes whatever queued up behind it too, oldest first: one
   * BLMPOP on Redis 7, BRPOP then RPOP with a count on 6.2 (two commands per wake-up: on a busy
   * channel, each command is a write and a read on the socket of both this process and Redis).
   */
  private async pop(key: string): Promise<string[]> {
    if (this.hasBlmpop !== false) {
      try {
        const popped = (await this.blocking.call('BLMPOP', 0, 1, key, 'RIGHT', 'COUNT', READ_COUNT)) as
          | [string, string[]]
          | null;
        this.hasBlmpop = true;
        return popped?.[1] ?? [];
      } catch (error) {
        if (this.hasBlmpop === true || !/unknown command/i.test(errorMessage(error))) throw error;
        this.hasBlmpop = false;
      }
    }
    const popped = await this.blocking.brpop(key, 0);
    if (popped === null) return [];
    const more = await this.blocking.rpop(key, READ_COUNT);
    return more ? [popped[1], ...more] : [popped[1]];
  }

  private receive(body: string): void {
    const payload = this.seal.open(this.self, body);
    if (payload === undefined) {
      this.countRejected(body);
      return;
    }
    let parsed: Envelope;
    try {
      parsed = envelope.parse(JSON.parse(payload), 'batch');
    } catch (error) {
      this.handlers.malformed(`a malformed batch arrived on ${this.self}: ${errorMessage(error)}`);
      return;
    }
    if (this.inSequence(parsed.from, parsed.epoch, parsed.seq)) this.handlers.batch(parsed.from, parsed.frames);
  }

  /**
   * Whether to deliver a batch. A number already seen is a resent LPUSH: dropped. Epoch 1 of a new
   * epoch is the sender's hello: the pair starts again. Anything else out of order (a gap, or a new
   * epoch that does not start at 1) is reported once, and the pair is then taken up again from
   * whatever comes next except a copy of that batch: if the out-of-order batch was forged, the
   * sender's real next batch costs nothing more.
   */
  private inSequence(from: string, epoch: string | undefined, seq: number): boolean {
    const known = this.seen.get(from);
    if (known === undefined) return this.restart(from, epoch, seq, false);
    if (known.loose) {
      if (known.epoch === epoch && known.seen === seq) return false;
      return this.restart(from, epoch, seq, false);
    }
    if (known.epoch !== epoch) {
      if (seq === 1) return this.restart(from, epoch, seq, false);
      this.handlers.broken(from, `${from} started again and batches from it were lost`);
      return this.restart(from, epoch, seq, true);
    }
    const expected = known.seen + 1;
    if (seq < expected) return false;
    if (seq === expected) {
      known.seen = seq;
      return true;
    }
    this.handlers.broken(from, `batches from ${from} were lost (got ${seq}, expected ${expected})`);
    return this.restart(from, epoch, seq, true);
  }

  private restart(from: string, epoch: string | undefined, seq: number, loose: boolean): true {
    this.seen.set(from, { epoch, seen: seq, loose });
    return true;
  }

  private countRejected(body: string): void {
    this.rejectedTotal += 1;
    if (this.rejectedPending) {
      this.rejectedPending.count += 1;
      return;
    }
    this.rejectedPending = { count: 1, firstFrom: senderOf(body) };
    this.rejectedTimer = setTimeout(() => this.reportRejected(), REJECTED_REPORT_MS);
    this.rejectedTimer.unref();
  }

  private reportRejected(): void {
    clearTimeout(this.rejectedTimer);
    const pending = this.rejectedPending;
    this.rejectedPending = undefined;
    if (!pending) return;
    this.handlers.malformed(
      `${pending.count} batch(es) on ${this.self} failed authentication and were dropped (the first claimed to be from ${pending.firstFrom})`,
    );
  }
}

/** The sender a rejected body claims, for the report only (it is not to be believed). */
function senderOf(body: string): string {
  const match = /"from":"([A-Za-z0-9_.:-]{1,200})"/.exec(body);
  return match ? `'${match[1]}'` : 'an unnamed sender';
}
