/**
 * A reply from the other side of a link (src/wire/protocol.ts, unwrapReply): a value is checked, a
 * refusal keeps its error code, and anything else is a protocol error (INTERNAL).
 */
import { describe, expect, it } from 'vitest';
import { str } from '../../../src/declare.js';
import { BroodError } from '../../../src/errors.js';
import { replyOf, unwrapReply } from '../../../src/wire/reply.js';
import { wire } from '../../../src/wire/wire-type.js';
import { expectCode } from '../../support/codes.js';

const text = wire(str());

describe('unwrapReply', () => {
  it('returns a value that passes its check', async () => {
    expect(unwrapReply(await replyOf(() => 'hello'), text, 'greeting')).toBe('hello');
  });

  it('rethrows a refusal with its code and details', async () => {
    const refusal = await replyOf(() => {
      throw new BroodError('ABORTED', 'the turn was cancelled', { details: { turn: 3 } });
    });
    const error = expectCode(() => unwrapReply(refusal, text, 'greeting'), 'ABORTED');
    expect(error.details).toEqual({ turn: 3 });
  });

  it('refuses malformed replies as protocol errors naming the message', () => {
    const malformed: unknown[] = [
      { ok: true, value: 42 },
      { ok: false, error: { code: 7, message: 'x' } },
      { ok: false, error: { code: 'ABORTED' } },
      { ok: 'yes', value: 'hello' },
      null,
    ];
    for (const raw of malformed) {
      const error = expectCode(() => unwrapReply(raw, text, 'greeting'), 'INTERNAL');
      expect(error.message).toContain('greeting');
    }
  });

  it('a refusal without an error is a failure of the named call', () => {
    expectCode(() => unwrapReply({ ok: false }, text, 'greeting'), 'INTERNAL');
  });
});
