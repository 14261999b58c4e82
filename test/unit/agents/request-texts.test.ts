/**
 * RequestTexts: a logged request's repeated texts (system prompt, tool names, provider, model) point at
 * one kept copy; what the event says never changes, however many distinct texts pass through.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RequestTexts } from '../../../src/agents/request-texts.js';

const request = fc.record(
  {
    provider: fc.string({ maxLength: 8 }),
    model: fc.string({ maxLength: 8 }),
    system: fc.string({ maxLength: 40 }),
    tools: fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxLength: 6 }),
    threadId: fc.nat(),
  },
  { requiredKeys: ['provider', 'model', 'system', 'tools'] },
);

describe('RequestTexts', () => {
  it("sharing never changes what a request's event says", () => {
    const texts = new RequestTexts();
    fc.assert(
      fc.property(fc.array(request, { maxLength: 30 }), (requests) => {
        for (const data of requests) {
          const before = structuredClone(data);
          texts.share(data);
          expect(data).toEqual(before);
        }
      }),
    );
  });

  it("leaves a frozen tool list (an inline driver's view's own) as it is", () => {
    const texts = new RequestTexts();
    const data = { provider: 'p', model: 'm', system: 's', tools: Object.freeze(['a', 'b']) };
    expect(() => texts.share(data)).not.toThrow();
    expect(data).toEqual({ provider: 'p', model: 'm', system: 's', tools: ['a', 'b'] });
  });

  it('keeps saying the right names once more distinct texts passed than it keeps', () => {
    const texts = new RequestTexts();
    for (let i = 0; i < 10_000; i++) {
      const data = { provider: `p${i % 7}`, model: `m${i}`, system: `s${i}`, tools: [`t${i}`, `t${i + 1}`] };
      texts.share(data);
      expect(data).toEqual({ provider: `p${i % 7}`, model: `m${i}`, system: `s${i}`, tools: [`t${i}`, `t${i + 1}`] });
    }
  });
});
