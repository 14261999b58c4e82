/**
 * The link's exchange policy: frames queued within a tick leave in one batch at its end, but a side
 * that has worked longer than the slice without exchanging sends what it has and handles what has
 * arrived once the running work's microtasks are done (mid-tick), and a frame somebody waits on
 * (`sent()`) never waits for the tick.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { type Carrier, type Frame, Link, type LinkOptions } from '../../../src/wire/link.js';
import { portCarrier } from '../../../src/wire/port-carrier.js';

/** A frame as it crosses (short keys): the link passes keys it does not name as they are. */
interface Recorded extends Frame {
  k: string;
  n: number;
}

/** A carrier that records what is sent and hands out batches "already waiting" through poll(). */
function recordingCarrier() {
  const sent: unknown[][] = [];
  const waiting: unknown[][] = [];
  let deliver: ((batch: unknown) => void) | undefined;
  const carrier: Carrier = {
    send: (batch) => sent.push(batch),
    onBatch: (handler) => {
      deliver = handler;
    },
    onClose: () => undefined,
    close: () => undefined,
    poll: () => waiting.shift(),
  };
  return { carrier, sent, waiting, deliver: (batch: unknown) => deliver?.(batch) };
}

function linkOver(carrier: Carrier, received: Recorded[], options: LinkOptions) {
  return new Link<Recorded, Recorded>(
    carrier,
    {
      accept: (raw) => raw as Recorded,
      frame: (frame) => received.push(frame),
      invalid: () => undefined,
      closed: () => undefined,
    },
    options,
  );
}

/** Resolves once the microtask queue has drained (a tick queued from a microtask runs only then). */
const drained = () => new Promise<void>((resolve) => queueMicrotask(() => process.nextTick(resolve)));
const endOfTick = () => new Promise<void>((resolve) => setImmediate(resolve));
const frame = (n: number): Recorded => ({ k: 'x', n });

describe('Link exchange slices', () => {
  it('batches the frames of one tick into one send at its end while the slice has not passed', async () => {
    const { carrier, sent } = recordingCarrier();
    const link = linkOver(carrier, [], { sliceMs: 60_000 });
    link.send(frame(1));
    link.send(frame(2));
    await drained();
    expect(sent).toEqual([]);
    await endOfTick();
    expect(sent).toEqual([[frame(1), frame(2)]]);
  });

  it('sends mid-tick, after the current synchronous work, once the slice has passed', async () => {
    const { carrier, sent } = recordingCarrier();
    const link = linkOver(carrier, [], { sliceMs: 0 });
    link.send(frame(1));
    link.send(frame(2)); // same synchronous stretch: joins the batch
    expect(sent).toEqual([]);
    await drained();
    expect(sent).toEqual([[frame(1), frame(2)]]);
    await endOfTick();
    expect(sent).toEqual([[frame(1), frame(2)]]); // the end of the tick sends nothing twice
  });

  it('sends what a chain of awaits queues after the slice in one batch, once the microtasks have run', async () => {
    const { carrier, sent } = recordingCarrier();
    const link = linkOver(carrier, [], { sliceMs: 0 });
    // A driver waking after a wait: its first event, then (a few awaits later) the call that follows it.
    const chain = (async () => {
      link.send(frame(1));
      await Promise.resolve();
      await Promise.resolve();
      link.send(frame(2));
    })();
    await chain;
    expect(sent).toEqual([]);
    await drained();
    expect(sent).toEqual([[frame(1), frame(2)]]);
    await endOfTick();
    expect(sent).toEqual([[frame(1), frame(2)]]);
  });

  it('handles batches that have arrived, in order, at a mid-tick exchange and before later deliveries', async () => {
    const { carrier, waiting, deliver } = recordingCarrier();
    const received: Recorded[] = [];
    const link = linkOver(carrier, received, { sliceMs: 0 });
    waiting.push([frame(1), frame(2)], [frame(3)]);
    link.send(frame(100));
    expect(received).toEqual([]);
    await drained();
    expect(received.map((f) => f.n)).toEqual([1, 2, 3]);
    deliver([frame(4)]);
    expect(received.map((f) => f.n)).toEqual([1, 2, 3, 4]);
  });

  it('handles nothing that arrives after its own send in the same exchange (a reply waits for the next one)', async () => {
    const { carrier, sent, waiting } = recordingCarrier();
    const answering: Carrier = {
      ...carrier,
      send: (batch) => {
        carrier.send(batch);
        waiting.push([frame(-1)]); // an instant answer, already waiting when send returns
      },
    };
    const received: Recorded[] = [];
    const link = linkOver(answering, received, { sliceMs: 0 });
    link.send(frame(1));
    await drained();
    expect(sent).toEqual([[frame(1)]]);
    expect(received).toEqual([]);
    link.send(frame(2)); // the next exchange takes it
    await drained();
    expect(received.map((f) => f.n)).toEqual([-1]);
  });

  it('sent() resolves without waiting for the end of the tick', async () => {
    const { carrier, sent } = recordingCarrier();
    const link = linkOver(carrier, [], { sliceMs: 60_000 });
    link.send(frame(1));
    let resolved = false;
    void link.sent().then(() => {
      resolved = true;
    });
    await drained();
    expect(resolved).toBe(true);
    expect(sent).toEqual([[frame(1)]]);
  });

  it('stops handling polled batches once a frame closes the link', async () => {
    const { carrier, waiting } = recordingCarrier();
    const received: Recorded[] = [];
    let link: Link<Recorded, Recorded> | undefined;
    link = new Link<Recorded, Recorded>(
      carrier,
      {
        accept: (raw) => raw as Recorded,
        frame: (f) => {
          received.push(f);
          if (f.n === 1) link?.close();
        },
        invalid: () => undefined,
        closed: () => undefined,
      },
      { sliceMs: 0 },
    );
    waiting.push([frame(1)], [frame(2)]);
    link.send(frame(100));
    await drained();
    expect(received.map((f) => f.n)).toEqual([1]);
    expect(waiting).toEqual([[frame(2)]]);
  });
});

describe('Link over a real MessagePort', () => {
  const ports: MessagePort[] = [];
  afterEach(() => {
    for (const port of ports.splice(0)) port.close();
  });

  it('takes a batch that arrived during synchronous work before the tick ends, and each batch once', async () => {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1, port2);
    const received: Recorded[] = [];
    const link = linkOver(portCarrier(port1), received, { sliceMs: 0 });
    port2.postMessage([frame(1)]);
    port2.postMessage([frame(2)]);
    // Both ends are in this thread: the two batches are already queued on port1, not yet delivered.
    link.send(frame(100));
    await drained();
    expect(received.map((f) => f.n)).toEqual([1, 2]);
    await endOfTick();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received.map((f) => f.n)).toEqual([1, 2]);
  });
});

describe('Link frames per turn', () => {
  it('handles a long batch a few frames per turn of the event loop, in order, later batches after it', async () => {
    const { carrier, deliver } = recordingCarrier();
    const received: Recorded[] = [];
    linkOver(carrier, received, { sliceMs: 60_000, framesPerTurn: 2 });
    deliver([frame(1), frame(2), frame(3), frame(4), frame(5)]);
    expect(received.map((f) => f.n)).toEqual([1, 2]);
    deliver([frame(6)]); // arrives while the first batch is still being handled: waits its turn
    expect(received.map((f) => f.n)).toEqual([1, 2]);
    await endOfTick();
    expect(received.map((f) => f.n)).toEqual([1, 2, 3, 4]);
    await endOfTick();
    await endOfTick();
    expect(received.map((f) => f.n)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('frames accept turns away cost no turn: a batch of them and one real frame is handled at once', async () => {
    const { carrier, deliver } = recordingCarrier();
    const seen: string[] = [];
    new Link<Recorded, Recorded>(
      carrier,
      {
        accept: (raw) => ((raw as Recorded).n > 0 ? (raw as Recorded) : undefined),
        frame: (f) => seen.push(`frame ${f.n}`),
        invalid: (raw) => seen.push(`turned away ${(raw as Recorded).n}`),
        closed: () => undefined,
      },
      { sliceMs: 60_000, framesPerTurn: 1 },
    );
    deliver([frame(0), frame(-1), frame(-2), frame(1), frame(-3), frame(2)]);
    // Within the call: the rejects before it and the first real frame; the rest waits a turn.
    expect(seen).toEqual(['turned away 0', 'turned away -1', 'turned away -2', 'frame 1']);
    await endOfTick();
    expect(seen.slice(4)).toEqual(['turned away -3', 'frame 2']);
  });

  it('handles every frame that arrived before the link closes, before its closed handler', () => {
    const { carrier, deliver } = recordingCarrier();
    const seen: string[] = [];
    const link = new Link<Recorded, Recorded>(
      carrier,
      {
        accept: (raw) => raw as Recorded,
        frame: (f) => seen.push(`frame ${f.n}`),
        invalid: () => undefined,
        closed: () => seen.push('closed'),
      },
      { framesPerTurn: 1 },
    );
    deliver([frame(1), frame(2), frame(3)]);
    link.close();
    expect(seen).toEqual(['frame 1', 'frame 2', 'frame 3', 'closed']);
  });

  it('handles batches whole when no limit is set', () => {
    const { carrier, deliver } = recordingCarrier();
    const received: Recorded[] = [];
    linkOver(carrier, received, {});
    deliver(Array.from({ length: 100 }, (_, i) => frame(i)));
    expect(received).toHaveLength(100);
  });
});
