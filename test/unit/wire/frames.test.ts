/**
 * A frame's one-letter keys stay on the wire: what the ends of a link read and write is named, and a
 * named frame shortened and read back is the same frame.
 */
import { describe, expect, it } from 'vitest';
import { readHostFrame, readParentFrame, shortFrame, type ToHost, type ToParent } from '../../../src/wire/frames.js';

const OUTCOME = { ok: false, error: { code: 'INTERNAL', message: 'boom' } } as const;

const toParent: ToParent[] = [
  { kind: 'rpc', activation: 3, message: { id: 'x', type: 'RAW', value: 1 } },
  { kind: 'log', activation: 3, events: [{ type: 'model/request', data: {} }] },
  { kind: 'end', activation: 3, outcome: OUTCOME },
  { kind: 'hello', activation: 3, host: { name: 'h', pid: 7 } },
  { kind: 'beat' },
  { kind: 'room', count: 4 },
  { kind: 'full', activation: 3 },
];

const toHost: ToHost[] = [
  { kind: 'init', board: new SharedArrayBuffer(8) },
  { kind: 'rpc', activation: 3, message: { id: 'x', type: 'APPLY', path: ['claimNext'], argumentList: [] } },
  { kind: 'cancel', activation: 3, turn: 2 },
  { kind: 'cells', activation: 3, values: [1, 2] },
  { kind: 'stop', activation: 3, reason: 'stuck' },
  { kind: 'gone', activation: 3 },
  { kind: 'beat' },
  { kind: 'place', activation: 3, job: { a: 3 }, view: 1 },
];

describe('frames on the wire', () => {
  it('cross with one-letter keys and arrive named, unchanged', () => {
    for (const frame of toParent) {
      const crossing = shortFrame(frame) as Record<string, unknown>;
      expect(Object.keys(crossing)).not.toContain('kind');
      expect(crossing.k).toBe(frame.kind);
      expect(readParentFrame(structuredClone(crossing))).toEqual(frame);
    }
    for (const frame of toHost) {
      const crossing = shortFrame(frame) as Record<string, unknown>;
      expect(Object.keys(crossing)).not.toContain('activation');
      expect(readHostFrame(crossing)).toEqual(frame);
    }
  });

  it('a malformed frame reads as nothing', () => {
    expect(readParentFrame({ kind: 'log', activation: 3, events: [] })).toBeUndefined();
    expect(readParentFrame({ k: 'log', a: 0, events: [] })).toBeUndefined();
    expect(readHostFrame({ k: 'cells', a: 3, v: ['1'] })).toBeUndefined();
    expect(readHostFrame(null)).toBeUndefined();
  });
});
