/**
 * The process carrier: one pair of endpoints (a parent runner and a `brood host`) over the Redis list
 * channel (src/queue/channel.ts). Each batch a link hands it leaves as one list entry, sealed and
 * sequenced by the channel; the channel's read loop hands each batch from the peer to `deliver`, whole
 * and in order. What the channel does about a lost, out-of-order or forged batch (report the pair once,
 * then take it up again) is the channel's; the links on both ends stay open through it.
 */
import type { Carrier } from './link.js';

/**
 * Link options for a Redis carrier: frames leave at the end of the tick, never mid-tick (SLICE_MS).
 * Between threads a mid-tick exchange is one postMessage; here each batch is an LPUSH and a read on
 * the other side (socket writes in three processes), and mid-tick exchanges made the hosts send
 * about 40% more batches per child (5.2 LPUSH per child against 3.7 at the end of the tick only).
 */
export const REDIS_LINK = { sliceMs: Number.POSITIVE_INFINITY } as const;

/** What a carrier needs of the channel: one list entry per batch, to one peer. */
export interface PeerChannel {
  sendBatch(peer: string, frames: unknown[]): void;
}

export interface RedisCarrier extends Carrier {
  readonly peer: string;
  /** A batch from the peer arrived. */
  deliver(frames: unknown[]): void;
  /** How many batches have arrived from the peer: what its silence is judged on (src/wire/silence.ts). */
  readonly heard: number;
}

export function redisCarrier(channel: PeerChannel, peer: string): RedisCarrier {
  let onBatch: ((batch: unknown) => void) | undefined;
  const onClose: (() => void)[] = [];
  let heard = 0;
  let closed = false;
  return {
    peer,
    get heard() {
      return heard;
    },
    send: (batch) => {
      if (!closed) channel.sendBatch(peer, batch);
    },
    onBatch: (handler) => {
      onBatch = handler;
    },
    onClose: (handler) => {
      onClose.push(handler);
    },
    deliver: (frames) => {
      heard += 1;
      if (!closed) onBatch?.(frames);
    },
    close: () => {
      if (closed) return;
      closed = true;
      for (const handler of onClose.splice(0)) handler();
    },
  };
}
