/**
 * console.log inside the sandbox keeps Node's formatting: each line must equal what `util.format`
 * prints for the same arguments evaluated in the host (values cross as encoded JSON and are rebuilt
 * for util.format in the sandbox thread).
 */
import { format } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, sandboxHarness } from './sandbox-harness.js';

/** Each entry is the argument list of one console.log call, as source text. */
const CALLS = [
  "'start', 1, { a: 1 }",
  "'%s=%d and %i%%', 'x', 42.5, 7.9, 'rest'",
  '{ a: { b: { c: { d: { e: 1 } } } }, list: [1, [2, [3, [4, [5]]]]] }',
  'Array.from({ length: 150 }, (_, i) => i)',
  '[1, , 3]',
  'undefined, null, NaN, -0, Infinity, -Infinity, 10n, true',
  "Symbol('tag'), function named() {}, class Shape {}, async function later() {}, function* gen() {}, () => 1",
  "new Map([['k', { v: 1 }], [2, 'two']]), new Set([1, 'a', [2]])",
  'new Date(0), /ab+c/gi',
  "(() => { const o = { name: 'loop' }; o.self = o; o.list = [o]; return o; })()",
  "{ get computed() { return 1; }, set only(v) {}, plain: 'p' }",
  'Object.assign(Object.create(null), { bare: true })',
  'new (class Point { constructor() { this.x = 1; this.y = 2; } })()',
  "{ s: 'y'.repeat(10005), t: 'short' }",
  'new Uint8Array([1, 2, 3]), new Float64Array(2)',
  "{ [Symbol('key')]: 1, 'needs quotes': 2, __proto_like: 3 }",
  "'multi\\nline', { nested: 'quote\\'s' }",
  "[{ a: 1, b: 'two' }, { a: 3, b: 'four' }]",
];

let harness: Harness;

beforeAll(() => {
  harness = sandboxHarness({ logs: CALLS.map((args) => `console.log(${args});`).join('\n') });
});

afterAll(async () => {
  await harness?.brood.close();
});

describe('console.log formatting inside the sandbox', () => {
  it('matches util.format for the same values, line by line', async () => {
    const result = await harness.run('logs');
    expect(result.isError).toBe(false);
    // Evaluated in the test's own realm, which is what util.format printed before the sandbox.
    const expected = CALLS.map((args) => format(...(new Function(`return [${args}];`)() as unknown[])));
    expect(result.content.split('\n').length).toBeGreaterThanOrEqual(CALLS.length);
    expect(result.content).toBe(expected.join('\n'));
  });
});
