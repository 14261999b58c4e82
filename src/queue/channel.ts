/**
 * The gateway channel between a parent runner and the hosts: one Redis list per endpoint, read by a
 * BRPOP loop on a dedicated blocking connection (Redis pub/sub would drop frames; a list keeps them
 * until read). Frames are batched per tick and per destination, one LPUSH per batch.
 *
 * Every batch carries a per-destination sequence number. A receiver that sees a gap (a batch lost
 * with a restarted Redis, or a send that failed) cannot trust anything in flight between the two
 * endpoints and reports it; the runner then recovers every activation the pair shared.
 */
import { z } from 'zod';
import { errorMessage } from '../errors.js';
import type { RedisClient } from './redis.js';

const envelopeSchema = z.object({
  from: z.string().min(1).max(200),
  seq: z.number().int().positive(),
  frames: z.array(z.unknown()),
});

export interface ChannelHandlers {
  /** The frames of one batch from `from`, in order. */
  batch(from: string, frames: unknown[]): void;
  /** A batch between this endpoint and `peer` was lost (either direction). */
  broken(peer: string, reason: string): void;
  /** Something arrived that is no batch (reported, then dropped). */
  malformed(reason: string): void;
}

export class Channel {
  private readonly outgoing = new Map<string, unknown[]>();
  private readonly sentSeq = new Map<string, number>();
  private readonly seenSeq = new Map<string, number>();
  private readonly expiresSet = new Map<string, number>();
  private scheduled = false;
  private closed = false;
  private reading: Promise<void> | undefined;

  constructor(
    readonly self: string,
    private readonly commands: RedisClient,
    private readonly blocking: RedisClient,
    private readonly keyOf: (endpoint: string) => string,
    private readonly ttlMs: number,
    private readonly handlers: ChannelHandlers,
  ) {}

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

  /** Forgets a peer (its sequence numbers); the next batch from it starts a new pair. */
  forget(peer: string): void {
    this.sentSeq.delete(peer);
    this.seenSeq.delete(peer);
  }

  flush(): Promise<void> {
    this.scheduled = false;
    const sends: Promise<void>[] = [];
    for (const [to, frames] of this.outgoing) {
      const seq = (this.sentSeq.get(to) ?? 0) + 1;
      this.sentSeq.set(to, seq);
      const key = this.keyOf(to);
      const body = JSON.stringify({ from: this.self, seq, frames });
      const failed = (error: unknown): void => {
        if (!this.closed) this.handlers.broken(to, `a batch to ${to} was not delivered (${errorMessage(error)})`);
      };
      sends.push(this.commands.lpush(key, body).then(() => undefined, failed));
      // The list of an endpoint that went away expires; renewing that once a second is enough.
      const now = Date.now();
      if ((this.expiresSet.get(to) ?? 0) < now - 1_000) {
        this.expiresSet.set(to, now);
        void this.commands.pexpire(key, this.ttlMs).catch(() => undefined);
      }
    }
    this.outgoing.clear();
    return Promise.all(sends).then(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
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
        const popped = await this.blocking.brpop(key, 0);
        if (popped === null) continue;
        bodies = [popped[1]];
        // Whatever queued up behind it comes in the same round trip, oldest first (RPOP count: Redis 6.2).
        const more = await this.blocking.rpop(key, 256);
        if (more) bodies.push(...more);
      } catch {
        if (this.closed) return;
        // The connection dropped (ioredis reconnects by itself); a short pause avoids a hot loop.
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      for (const body of bodies) this.receive(body);
    }
  }

  private receive(body: string): void {
    let parsed: z.infer<typeof envelopeSchema>;
    try {
      parsed = envelopeSchema.parse(JSON.parse(body));
    } catch (error) {
      this.handlers.malformed(`a malformed batch arrived on ${this.self}: ${errorMessage(error)}`);
      return;
    }
    const expected = (this.seenSeq.get(parsed.from) ?? 0) + 1;
    if (parsed.seq < expected) return; // a resent LPUSH that had reached Redis already
    this.seenSeq.set(parsed.from, parsed.seq);
    if (parsed.seq !== expected)
      this.handlers.broken(
        parsed.from,
        `batches from ${parsed.from} were lost (got ${parsed.seq}, expected ${expected})`,
      );
    this.handlers.batch(parsed.from, parsed.frames);
  }
}
