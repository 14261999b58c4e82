/** The subscriber queue alone: bounded memory, delta coalescing, drop-oldest with one lagged report. */
import { describe, expect, it } from 'vitest';
import { EventStream } from '../../../src/events/stream.js';
import type { BroodEvent } from '../../../src/index.js';

const base = { parentId: undefined, depth: 0, time: 1 };
const delta = (agentId: string, text: string, turn = 1): BroodEvent => ({
  ...base,
  agentId,
  type: 'text-delta',
  turn,
  delta: text,
});
const start = (agentId: string, turn: number): BroodEvent => ({
  ...base,
  agentId,
  type: 'turn-start',
  turn,
  messageIds: [],
});

function drain(stream: EventStream): Promise<BroodEvent[]> {
  stream.end();
  return (async () => {
    const out: BroodEvent[] = [];
    for await (const event of stream) out.push(event);
    return out;
  })();
}

const make = (buffer: number) =>
  new EventStream(
    buffer,
    'root',
    () => 42,
    () => undefined,
  );

describe('EventStream', () => {
  it('below the buffer nothing is merged: each delta stays one event', async () => {
    const stream = make(10);
    for (const word of ['a ', 'b ', 'c']) stream.push(delta('x', word));
    expect((await drain(stream)).map((e) => (e.type === 'text-delta' ? e.delta : e.type))).toEqual(['a ', 'b ', 'c']);
  });

  it('past the buffer, adjacent deltas of one agent turn coalesce before anything is dropped', async () => {
    const stream = make(3);
    stream.push(start('x', 1));
    for (let i = 0; i < 100; i += 1) stream.push(delta('x', `${i},`));
    expect(stream.size).toBeLessThanOrEqual(3);
    const events = await drain(stream);
    expect(events[0]?.type).toBe('turn-start');
    const text = events
      .filter((e) => e.type === 'text-delta')
      .map((e) => (e.type === 'text-delta' ? e.delta : ''))
      .join('');
    expect(text).toBe(Array.from({ length: 100 }, (_, i) => `${i},`).join(''));
  });

  it('deltas of different agents or turns are never merged together', async () => {
    const stream = make(2);
    stream.push(delta('x', 'x1'));
    stream.push(delta('y', 'y1'));
    stream.push(delta('x', 'x2', 2));
    const events = await drain(stream);
    // Nothing could coalesce: the oldest was dropped and reported.
    expect(events[0]).toEqual({ type: 'lagged', agentId: 'root', parentId: undefined, depth: 0, time: 42, dropped: 1 });
    expect(events.slice(1).map((e) => (e.type === 'text-delta' ? `${e.agentId}:${e.delta}` : e.type))).toEqual([
      'y:y1',
      'x:x2',
    ]);
  });

  it('a reader that never reads holds at most buffer events however many arrive; one lagged counts every drop', async () => {
    const stream = make(50);
    for (let i = 0; i < 10_000; i += 1) stream.push(start('x', i));
    expect(stream.size).toBe(50);
    const events = await drain(stream);
    expect(events[0]).toMatchObject({ type: 'lagged', dropped: 10_000 - 50 });
    expect(events.slice(1).map((e) => (e.type === 'turn-start' ? e.turn : -1))).toEqual(
      Array.from({ length: 50 }, (_, i) => 10_000 - 50 + i),
    );
  });

  it('events shared with other subscribers are never mutated by coalescing', () => {
    const stream = make(1);
    const first = delta('x', 'one ');
    stream.push(first);
    stream.push(delta('x', 'two'));
    expect(first).toMatchObject({ delta: 'one ' });
  });

  it('return() unsubscribes once, and later pushes are ignored', async () => {
    let closes = 0;
    const stream = new EventStream(
      5,
      'root',
      () => 0,
      () => closes++,
    );
    stream.push(start('x', 1));
    await stream.return();
    stream.push(start('x', 2));
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    expect(closes).toBe(1);
  });
});
