/**
 * Each wire message is declared once (src/wire/protocol.ts, with src/declare.ts), and the two things
 * derived from that declaration — the compiled fast check and the zod schema — agree: on valid
 * messages, on valid messages with one mutation anywhere inside (a key deleted, a value replaced by
 * anything, an unknown key added), and on arbitrary values — the same verdict, and where both accept,
 * the same output (the check returns its input; the loose schema returns a copy that must equal it).
 * Also checked at compile time: the public types the wire carries but does not declare (a tool's
 * result, the model route) and their inferred wire types are assignable both ways, so neither can
 * drift from the other. (The driver's own types are the inferred ones: nothing to compare.)
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelRoute, ToolResult } from '../../../src/types.js';
import { hostFrame, parentFrame } from '../../../src/wire/frames.js';
import {
  activationOutcome,
  claimedMessage,
  classifyArgs,
  codeCallReply,
  codeCallRequest,
  concurrencyClass,
  driverEvents,
  driverPlan,
  driverView,
  programId,
  toolBatch,
  toolCallRequest,
  toolResult,
  toolResults,
  turnReport,
  type WireType,
} from '../../../src/wire/protocol.js';

// ——— compile-time agreement between inferred wire types and the public types ———
type WireOf<W> = W extends WireType<infer T> ? T : never;
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree = <T extends true>(value: T): T => value;
agree<Mutual<WireOf<typeof programId>, string>>(true);
agree<Mutual<WireOf<typeof toolResult>, ToolResult>>(true);
agree<Mutual<WireOf<typeof toolResults>, ToolResult[]>>(true);
agree<Mutual<WireOf<typeof driverPlan>['route'], ModelRoute>>(true);

// ——— valid messages ———
const str = fc.string({ maxLength: 8 });
const nonEmpty = fc.string({ minLength: 1, maxLength: 8 });
const nat = fc.nat({ max: 1000 });
const record = fc.dictionary(str, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
const sab = fc.constant(null).map(() => new SharedArrayBuffer(4));
/** A version cell as it crosses: one Int32 of a shared slab (here at a non-zero offset, as slabs cut them). */
const cell = fc.nat({ max: 3 }).map((at) => new Int32Array(new SharedArrayBuffer(16), at * 4, 1));
const optionalKeys = <T extends Record<string, fc.Arbitrary<unknown>>>(required: (keyof T & string)[], shape: T) =>
  fc.record(shape, { requiredKeys: required });

const toolCall = fc.record({ callId: nonEmpty, name: nonEmpty, arguments: str });
const view = fc.record({
  system: str,
  tools: fc.array(fc.record({ name: str, description: str, parameters: record }), { maxLength: 3 }),
  classes: fc.dictionary(str, fc.constantFrom('parallel', 'exclusive', 'dynamic'), { maxKeys: 3 }),
});
const claim = fc.record({ turn: nat, messageId: str, text: str, aborted: fc.boolean() });
const chatMessage = fc.oneof(
  fc.record({ role: fc.constant('user'), text: str }),
  optionalKeys(['role', 'text', 'toolCalls'], {
    role: fc.constant('assistant'),
    text: str,
    toolCalls: fc.array(toolCall, { maxLength: 2 }),
    reasoning: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('thinking'), thinking: str, signature: str }),
        fc.record({ type: fc.constant('redacted_thinking'), data: str }),
      ),
      { maxLength: 2 },
    ),
  }),
  fc.record({ role: fc.constant('tool'), callId: str, name: str, content: str, isError: fc.boolean() }),
);
const plan = optionalKeys(
  [
    'agentId',
    'route',
    'view',
    'history',
    'ownStart',
    'maxParallelToolCalls',
    'codeMode',
    'codeBusyTimeoutMs',
    'codeWallTimeoutMs',
    'codeLimits',
    'versions',
  ],
  {
    agentId: str,
    route: optionalKeys(['provider', 'model'], {
      provider: str,
      model: str,
      reasoningEffort: str,
      maxTokens: fc.integer({ min: 1, max: 1e6 }),
    }),
    view: fc.option(view, { nil: null }),
    history: fc.array(chatMessage, { maxLength: 3 }),
    ownStart: nat,
    maxParallelToolCalls: fc.integer({ min: 1, max: 64 }),
    maxSteps: fc.integer({ min: 1, max: 100 }),
    toolsInParent: fc.boolean(),
    eventsFlag: cell,
    codeMode: fc.constantFrom('native', 'code', 'both'),
    codeBusyTimeoutMs: fc.double({ min: 0.5, max: 1e6, noNaN: true }),
    codeWallTimeoutMs: fc.integer({ min: 1, max: 1e6 }),
    codeLimits: fc.record({
      memoryMb: fc.integer({ min: 1, max: 1024 }),
      stackKb: fc.integer({ min: 1, max: 4096 }),
      maxOutputBytes: fc.integer({ min: 1, max: 1e8 }),
      maxToolCalls: fc.integer({ min: 1, max: 1e5 }),
    }),
    versions: fc.array(cell, { maxLength: 2 }),
    stepCell: cell,
    stepSeen: nat,
    firstMessage: claim,
    resumeTurn: optionalKeys(['turn', 'messageId', 'startedCallIds'], {
      turn: fc.integer(),
      messageId: str,
      startedCallIds: fc.array(str, { maxLength: 2 }),
      lastFinish: str,
    }),
  },
);
const events = fc.array(fc.record({ type: nonEmpty, data: record }), { maxLength: 3 });
const envelope = optionalKeys(['code', 'message'], { code: str, message: str, details: record });
const outcome = fc.oneof(fc.record({ ok: fc.constant(true) }), fc.record({ ok: fc.constant(false), error: envelope }));
const token = fc.integer({ min: 1, max: 2 ** 31 });

const MESSAGES: [string, WireType<unknown>, fc.Arbitrary<unknown>][] = [
  ['toolCallRequest', toolCallRequest, toolCall],
  [
    'codeCallRequest',
    codeCallRequest,
    fc.record({
      program: fc.string({ minLength: 1, maxLength: 64 }),
      callId: nonEmpty,
      name: nonEmpty,
      arguments: str,
    }),
  ],
  [
    'codeCallReply',
    codeCallReply,
    fc.oneof(
      fc.record({ ok: fc.constant(true), json: str }),
      fc.record({ ok: fc.constant(true), text: str }),
      fc.record({ ok: fc.constant(false), message: str }),
    ),
  ],
  ['programId', programId, fc.string({ minLength: 1, maxLength: 64 })],
  [
    'toolResult',
    toolResult,
    optionalKeys(['isError', 'content'], {
      isError: fc.boolean(),
      content: str,
      value: fc.jsonValue({ maxDepth: 2 }),
      error: optionalKeys(['message'], { code: str, message: str }),
    }),
  ],
  ['toolBatch', toolBatch, fc.record({ calls: fc.array(toolCall, { minLength: 1, maxLength: 3 }) })],
  [
    'toolResults',
    toolResults,
    fc.array(
      optionalKeys(['isError', 'content'], {
        isError: fc.boolean(),
        content: str,
        value: fc.jsonValue({ maxDepth: 2 }),
        error: optionalKeys(['message'], { code: str, message: str }),
      }),
      { maxLength: 3 },
    ),
  ],
  ['driverEvents', driverEvents, events],
  ['driverView', driverView, view],
  ['claimedMessage', claimedMessage, fc.option(claim, { nil: null })],
  [
    'turnReport',
    turnReport,
    optionalKeys(['turn', 'output', 'stopReason', 'usage'], {
      turn: nat,
      output: str,
      stopReason: fc.constantFrom('completed', 'aborted', 'error', 'max-tokens', 'refusal', 'max-steps'),
      usage: optionalKeys(['inputTokens', 'outputTokens'], {
        inputTokens: fc.double({ min: 0, max: 1e9, noNaN: true }),
        outputTokens: nat,
        cacheReadTokens: nat,
        cacheWriteTokens: nat,
      }),
      diagnostic: str,
    }),
  ],
  ['classifyArgs', classifyArgs, fc.tuple(str, str)],
  ['concurrencyClass', concurrencyClass, fc.constantFrom('parallel', 'exclusive')],
  ['driverPlan', driverPlan, plan],
  ['activationOutcome', activationOutcome, outcome],
  [
    'hostFrame',
    hostFrame,
    fc.oneof(
      fc.record({ k: fc.constant('init'), board: sab }),
      fc.record({ k: fc.constant('start'), a: token, plan }),
      fc.record({ k: fc.constant('rpc'), a: token, m: fc.jsonValue({ maxDepth: 2 }) }),
      optionalKeys(['k', 'a'], { k: fc.constant('cancel'), a: token, turn: fc.integer() }),
    ),
  ],
  [
    'parentFrame',
    parentFrame,
    fc.oneof(
      fc.record({ k: fc.constant('rpc'), a: token, m: fc.jsonValue({ maxDepth: 2 }) }),
      fc.record({ k: fc.constant('log'), a: token, events }),
      fc.record({ k: fc.constant('end'), a: token, outcome }),
    ),
  ],
];

// ——— mutations: one change somewhere inside a valid message ———
// Keys never `__proto__`: zod's record and loose-object output drops an own `__proto__` key while the
// hand check passes the message through as it came, so "the same output" cannot hold for it (fast-check
// generates the key on purpose; seed 216649224 found it). Brood keeps the message it checked, and stores
// it as JSON, where such a key stays an ordinary property.
const notProto = fc.string().filter((key) => key !== '__proto__');
const oddValues = fc.oneof(
  fc.anything({
    key: notProto,
    maxDepth: 2,
    withNullPrototype: true,
    withMap: true,
    withSet: true,
    withDate: true,
    withTypedArray: true,
    withBigInt: true,
  }),
  fc.constantFrom<unknown>(
    NaN,
    Infinity,
    -Infinity,
    -1,
    0.5,
    -0,
    2 ** 53,
    '',
    null,
    undefined,
    [],
    {},
    'exclusive',
    'max-steps',
    true,
  ),
);
interface Mutation {
  path: number[];
  op: 'delete' | 'replace' | 'extra';
  key: string;
  value: unknown;
}
const mutation = fc.record({
  path: fc.array(fc.nat(), { maxLength: 5 }),
  op: fc.constantFrom<Mutation['op']>('delete', 'replace', 'extra'),
  key: str,
  value: oddValues,
});

const isContainer = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !(value instanceof SharedArrayBuffer) && !ArrayBuffer.isView(value);

/** Applies `m` to a deep copy of `value`, descending along `m.path` as far as containers go. */
function mutate(value: unknown, m: Mutation): unknown {
  const root = { value: structuredClone(value) } as Record<string, unknown>;
  let parent = root;
  let key = 'value';
  for (const step of m.path) {
    const node = parent[key];
    if (!isContainer(node)) break;
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    parent = node;
    key = keys[step % keys.length]!;
  }
  const target = parent[key];
  if (m.op === 'extra' && isContainer(target) && !Array.isArray(target)) target[`extra${m.key}`] = m.value;
  else if (m.op === 'delete' && parent !== root) delete parent[key];
  else parent[key] = m.value;
  return root.value;
}

/**
 * Same data: own enumerable keys and values, recursively (zod builds plain copies; the hand check
 * returns the input, which may have a null prototype), shared memory (buffers, cells) by identity.
 */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return true;
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return isDeepStrictEqual(a, b);
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameData(a[key], b[key]))
  );
}

function verdicts(wire: WireType<unknown>, input: unknown): { fast: boolean; zod: boolean; sameOutput: boolean } {
  const fast = wire.check(input);
  const parsed = wire.schema.safeParse(input);
  return { fast, zod: parsed.success, sameOutput: !fast || !parsed.success || sameData(parsed.data, input) };
}

/**
 * Runs per property and message. Every message's check and schema come from the same compiler
 * (src/declare.ts), so the runs of all seventeen messages exercise its every path many times over.
 */
const RUNS = 100;

describe.each(MESSAGES)('%s: hand check ≡ zod schema', (_name, wire, valid) => {
  it('accepts every valid message, and zod returns the same value', () => {
    fc.assert(
      fc.property(valid, (input) => {
        expect(verdicts(wire, input)).toEqual({ fast: true, zod: true, sameOutput: true });
      }),
      { numRuns: RUNS },
    );
  });

  it('gives the same verdict and output after any one mutation (deleted key, odd value, extra key)', () => {
    fc.assert(
      fc.property(valid, mutation, (input, m) => {
        const result = verdicts(wire, mutate(input, m));
        expect(result.fast).toBe(result.zod);
        expect(result.sameOutput).toBe(true);
      }),
      { numRuns: 2 * RUNS },
    );
  });

  it('gives the same verdict on arbitrary values', () => {
    fc.assert(
      fc.property(oddValues, (input) => {
        const result = verdicts(wire, input);
        expect(result.fast).toBe(result.zod);
        expect(result.sameOutput).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it('parse() returns the input itself when it is valid and throws INTERNAL naming the message otherwise', () => {
    fc.assert(
      fc.property(valid, mutation, (input, m) => {
        const mutated = mutate(input, m);
        if (wire.check(mutated)) expect(wire.parse(mutated, 'probe')).toBe(mutated);
        else
          expect(() => wire.parse(mutated, 'probe')).toThrow(
            expect.objectContaining({ code: 'INTERNAL', message: expect.stringContaining('malformed probe message') }),
          );
      }),
      { numRuns: RUNS / 2 },
    );
  });
});
