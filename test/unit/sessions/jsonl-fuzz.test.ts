/**
 * Property: whatever a crash or a stray writer does to a valid file — cut it anywhere, splice in
 * garbage anywhere — read() either returns the original header with a prefix of the original events,
 * or rejects with SESSION_CORRUPT / NOT_RESUMABLE. Never another error, never a hang.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BroodError } from '../../../src/errors.js';
import { fileSessions } from '../../../src/sessions/jsonl.js';
import type { SessionEvent } from '../../../src/types.js';
import { header, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(async () => cleanup());

function fileText(id: string, evs: SessionEvent[]): Buffer {
  return Buffer.from([header(id), ...evs].map((value) => `${JSON.stringify(value)}\n`).join(''));
}

const eventsArb = fc
  .array(fc.tuple(fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 8 })), { maxLength: 8 })
  .map((pairs) =>
    pairs.map(
      ([type, text], seq): SessionEvent => ({
        seq,
        time: seq * 10,
        type: `t/${type}`,
        data: { text, nested: { seq } },
      }),
    ),
  );

// A control byte is invalid anywhere in JSON (inside or outside strings), so garbage that starts with
// one can never turn the line it lands in into different-but-valid data; the rest is arbitrary bytes.
const poison = fc.integer({ min: 0, max: 0x1f }).filter((b) => b !== 0x09 && b !== 0x0a && b !== 0x0d);
const garbageArb = fc
  .tuple(poison, fc.uint8Array({ maxLength: 40 }))
  .map(([first, rest]) => Uint8Array.from([first, ...rest]));

type Damage = { cut?: number; garbage?: { at: number; bytes: Uint8Array } };
const damageArb: fc.Arbitrary<Damage> = fc
  .record(
    {
      cut: fc.double({ min: 0, max: 1, noNaN: true }),
      garbage: fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: garbageArb }),
    },
    { requiredKeys: [] },
  )
  .map((d) => d as Damage);

function damage(bytes: Buffer, d: Damage): Buffer {
  let out = bytes;
  if (d.garbage !== undefined) {
    const at = Math.floor(d.garbage.at * out.length);
    out = Buffer.concat([out.subarray(0, at), d.garbage.bytes, out.subarray(at)]);
  }
  if (d.cut !== undefined) out = out.subarray(0, Math.floor(d.cut * out.length));
  return out;
}

let counter = 0;

it('read() of a damaged file yields a prefix or SESSION_CORRUPT / NOT_RESUMABLE', async () => {
  await fc.assert(
    fc.asyncProperty(eventsArb, damageArb, async (evs, d) => {
      const id = `f${counter++}`;
      const file = join(dir, `${id}.jsonl`);
      const damaged = damage(fileText(id, evs), d);
      await writeFile(file, damaged);
      const store = fileSessions(dir);
      try {
        const result = await store.read(id).then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        if (!result.ok) {
          expect(result.error).toBeInstanceOf(BroodError);
          expect(['SESSION_CORRUPT', 'NOT_RESUMABLE']).toContain((result.error as BroodError).code);
          return;
        }
        expect(result.value.header).toEqual(header(id));
        expect(result.value.events).toEqual(evs.slice(0, result.value.events.length));
        // Reading never writes: the damaged bytes are still there.
        expect(Buffer.compare(await readFile(file), Buffer.from(damaged))).toBe(0);
        // The writer's repair (on opening for append) is durable and idempotent: the file now ends
        // cleanly and re-reads identically.
        await store.flush(id);
        expect((await readFile(file)).at(-1)).toBe(0x0a);
        expect(await fileSessions(dir).read(id)).toEqual(result.value);
      } finally {
        await store.close();
      }
    }),
    { numRuns: 300 },
  );
});

it('undamaged files always read back exactly', async () => {
  await fc.assert(
    fc.asyncProperty(eventsArb, async (evs) => {
      const id = `u${counter++}`;
      await writeFile(join(dir, `${id}.jsonl`), fileText(id, evs));
      const store = fileSessions(dir);
      try {
        expect(await store.read(id)).toEqual({ header: header(id), events: evs });
      } finally {
        await store.close();
      }
    }),
    { numRuns: 100 },
  );
});
