/**
 * The model-response hand check agrees with its zod schema (src/driver/response-check.ts): on valid
 * responses, on valid responses with one mutation anywhere inside, and on arbitrary values — the same
 * verdict, and where both accept, the same cleaned response (known keys only, as zod returns it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkModelResponse, responseSchema } from '../../../src/driver/response-check.js';

const str = fc.string({ maxLength: 6 });
const count = fc.oneof(fc.nat(), fc.double({ min: 0, max: 1e6, noNaN: true }));
const toolCall = fc.record({ callId: str, name: str, arguments: str });
const block = fc.oneof(
  fc.record({ type: fc.constant('thinking'), thinking: str, signature: str }),
  fc.record({ type: fc.constant('redacted_thinking'), data: str }),
);
const response = fc.record(
  {
    text: str,
    toolCalls: fc.array(toolCall, { maxLength: 3 }),
    finish: fc.constantFrom('stop', 'tool-calls', 'max-tokens', 'refusal', 'error', 'other'),
    usage: fc.record(
      { inputTokens: count, outputTokens: count, cacheReadTokens: count, cacheWriteTokens: count },
      { requiredKeys: ['inputTokens', 'outputTokens'] },
    ),
    diagnostic: str,
    reasoning: fc.array(block, { maxLength: 2 }),
  },
  { requiredKeys: ['text', 'toolCalls', 'finish', 'usage'] },
);

/** Replaces one value anywhere inside (or deletes a key, or adds one) — the near misses a check gets wrong. */
function mutate(value: unknown, path: number[], replacement: unknown, mode: number): unknown {
  if (typeof value !== 'object' || value === null) return replacement;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...value };
  const keys = Object.keys(copy);
  if (keys.length === 0 || path.length === 0) {
    if (mode === 0 && !Array.isArray(copy)) (copy as Record<string, unknown>).extra = replacement;
    return mode === 1 ? replacement : copy;
  }
  const key = keys[path[0]! % keys.length]!;
  const target = copy as Record<string, unknown>;
  if (path.length === 1 && mode === 2 && !Array.isArray(copy)) delete target[key];
  else target[key] = mutate(target[key], path.slice(1), replacement, mode);
  return copy;
}

function verdictOfSchema(raw: unknown): { ok: boolean; data?: unknown } {
  const parsed = responseSchema().safeParse(raw);
  return parsed.success ? { ok: true, data: parsed.data } : { ok: false };
}

function agrees(raw: unknown): void {
  const schema = verdictOfSchema(raw);
  const ids = schema.ok ? (schema.data as { toolCalls: { callId: string }[] }).toolCalls.map((c) => c.callId) : [];
  const unique = new Set(ids).size === ids.length;
  const checked = checkModelResponse(raw);
  expect(checked.ok).toBe(schema.ok && unique);
  if (checked.ok) expect(checked.response).toEqual(schema.data);
}

describe('checkModelResponse hand check', () => {
  it('agrees with the zod schema on valid responses', () => {
    fc.assert(fc.property(response, agrees), { numRuns: 500 });
  });

  it('agrees with the zod schema on responses with one mutation inside', () => {
    const replacement = fc.oneof(fc.anything(), fc.constant(undefined), fc.constant(-1), fc.constant(Number.NaN));
    fc.assert(
      fc.property(response, fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), replacement, fc.nat(2), (r, p, v, m) =>
        agrees(mutate(r, p, v, m)),
      ),
      { numRuns: 2000 },
    );
  });

  it('agrees with the zod schema on arbitrary values', () => {
    fc.assert(fc.property(fc.anything(), agrees), { numRuns: 500 });
  });

  it('returns fresh objects with known keys only, never the adapter’s own', () => {
    const raw = {
      text: 'hi',
      toolCalls: [{ callId: 'c1', name: 'noop', arguments: '{}', extra: 1 }],
      finish: 'tool-calls',
      usage: { inputTokens: 1, outputTokens: 2, extra: true },
      extra: 'dropped',
    };
    const checked = checkModelResponse(raw);
    expect(checked).toEqual({
      ok: true,
      response: {
        text: 'hi',
        toolCalls: [{ callId: 'c1', name: 'noop', arguments: '{}' }],
        finish: 'tool-calls',
        usage: { inputTokens: 1, outputTokens: 2 },
      },
    });
    if (checked.ok) expect(checked.response.toolCalls[0]).not.toBe(raw.toolCalls[0]);
  });
});

describe('tool call ids', () => {
  const withIds = (ids: string[]) => ({
    text: '',
    toolCalls: ids.map((callId) => ({ callId, name: 'echo', arguments: '{}' })),
    finish: 'tool-calls',
    usage: { inputTokens: 1, outputTokens: 1 },
  });

  it('a response is accepted exactly when its call ids are distinct, however many calls it makes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'), { maxLength: 14 }),
        (ids) => {
          const checked = checkModelResponse(withIds(ids));
          expect(checked.ok).toBe(new Set(ids).size === ids.length);
          if (!checked.ok) expect(checked.reason).toContain('duplicate tool call ids');
        },
      ),
    );
  });
});
