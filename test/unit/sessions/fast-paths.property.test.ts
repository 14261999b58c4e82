/**
 * The session store's hand-written fast checks agree with its zod schemas, for random
 * valid and invalid events and headers (wrong types, NaN/Infinity, empty strings, arrays, class instances, extra
 * keys, keys such as `constructor`). The wire protocol's hand checks are held to their schemas by
 * test/wire/protocol-agreement.test.ts.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import {
  eventProblem,
  isQuickEvent,
  isQuickHeader,
  sessionEventSchema,
  sessionHeaderSchema,
} from '../../../src/sessions/validate.js';

class Instance {
  constructor(readonly type = 'x') {}
}

const weirdKey = fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf');
const key = fc.oneof(fc.string({ maxLength: 6 }), weirdKey);
const numberish = fc.oneof(
  fc.integer({ min: -3, max: 1_000 }),
  fc.double(),
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    2 ** 53,
    Number.MAX_SAFE_INTEGER,
    0.5,
  ),
);
const stringish = fc.oneof(fc.string({ maxLength: 8 }), fc.constant(''));
const plainData = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((entries) => {
  // fc.dictionary builds with defineProperty, so "__proto__" stays an own key like JSON.parse makes it.
  return entries;
});
const nullProtoData = plainData.map((entries) =>
  Object.assign(Object.create(null) as Record<string, unknown>, entries),
);
const notData = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.constant(new Date(0)),
  fc.constant(new Map()),
  fc.constant(new Instance()),
  fc.string(),
  fc.integer(),
);
const anyValue = fc.oneof(fc.anything({ maxDepth: 2 }), notData, numberish, stringish, plainData);

/** An object built from optional fields (each valid or not) plus random extra keys. */
function shaped(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const entries = Object.entries(fields).map(([name, arb]) =>
    fc.option(
      arb.map((value) => [name, value] as const),
      { nil: undefined, freq: 6 },
    ),
  );
  const object = fc.tuple(fc.tuple(...entries), fc.dictionary(key, anyValue, { maxKeys: 2 })).map(([picked, extra]) => {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(extra))
      Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    for (const entry of picked) if (entry !== undefined) out[entry[0]] = entry[1];
    return out;
  });
  return fc.oneof(
    { arbitrary: object, weight: 8 },
    { arbitrary: notData, weight: 1 },
    { arbitrary: object.map((o) => Object.assign(new Instance(), o)), weight: 1 },
  );
}

const sessionEvent = shaped({
  seq: fc.oneof(fc.nat(50), numberish, stringish),
  time: fc.oneof(fc.integer(), numberish, stringish),
  type: fc.oneof(stringish, fc.integer()),
  data: fc.oneof(plainData, nullProtoData, notData),
});

const RUNS = { numRuns: 2_000 };

it("session events: isQuickEvent gives sessionEventSchema's verdict (NaN and Infinity times included)", () => {
  fc.assert(
    fc.property(sessionEvent, (value) => {
      expect(isQuickEvent(value)).toBe(sessionEventSchema.safeParse(value).success);
      expect(eventProblem(value) === undefined).toBe(sessionEventSchema.safeParse(value).success);
    }),
    RUNS,
  );
});

const modelRoute = shaped({
  provider: fc.oneof(stringish, fc.integer()),
  model: fc.oneof(stringish, fc.integer()),
  reasoningEffort: fc.oneof(stringish, fc.integer(), fc.constant(undefined)),
  maxTokens: fc.oneof(fc.integer({ min: -2, max: 8 }), numberish, stringish, fc.constant(undefined)),
});

const sessionHeader = shaped({
  id: fc.oneof(stringish, fc.integer()),
  createdAt: fc.oneof(fc.integer(), numberish, stringish),
  parentSession: fc.oneof(stringish, fc.integer(), fc.constant(undefined)),
  origin: fc.oneof(fc.constant('subagent'), stringish, fc.integer(), fc.constant(undefined)),
  delegationDepth: fc.oneof(fc.nat(4), anyValue),
  seedLength: fc.oneof(fc.nat(5), numberish, stringish, fc.constant(undefined)),
  model: fc.oneof(modelRoute, notData),
});

it("session headers: isQuickHeader gives sessionHeaderSchema's verdict for any object", () => {
  fc.assert(
    fc.property(sessionHeader, (value) => {
      fc.pre(typeof value === 'object' && value !== null && !Array.isArray(value));
      expect(isQuickHeader(value as Record<string, unknown>)).toBe(sessionHeaderSchema.safeParse(value).success);
    }),
    RUNS,
  );
});
