import { describe, expect, it } from 'vitest';
import {
  checkCarriable,
  checkInput,
  DEFAULT_MAX_INPUT_BYTES,
  isMessageParts,
} from '../../../src/models/content-parts.js';
import { estimateTokens } from '../../../src/models/estimate.js';
import { expectCode } from '../../support/codes.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PNG_BASE64 = Buffer.from(PNG).toString('base64');

describe('a message input', () => {
  it('a string is its own text, with no parts', () => {
    expect(checkInput('hello')).toEqual({ text: 'hello' });
  });

  it('text-only parts are kept as the joined text', () => {
    expect(
      checkInput([
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ]),
    ).toEqual({ text: 'a\nb' });
  });

  it('bytes, base64 and a base64 data: URL are all kept as the same base64; an https: URL as given', () => {
    const checked = checkInput([
      { type: 'text', text: 'What is in this chart?' },
      { type: 'image', data: PNG, mediaType: 'image/png' },
      { type: 'image', data: PNG_BASE64, mediaType: 'IMAGE/PNG' },
      { type: 'image', data: `data:image/png;base64,${PNG_BASE64}`, mediaType: 'image/png' },
      { type: 'file', data: 'https://example.com/a.pdf', mediaType: 'application/pdf', filename: 'a.pdf' },
    ]);
    expect(checked).toEqual({
      text: 'What is in this chart?',
      parts: [
        { type: 'text', text: 'What is in this chart?' },
        { type: 'image', data: PNG_BASE64, mediaType: 'image/png' },
        { type: 'image', data: PNG_BASE64, mediaType: 'image/png' },
        { type: 'image', data: PNG_BASE64, mediaType: 'image/png' },
        { type: 'file', data: 'https://example.com/a.pdf', mediaType: 'application/pdf', filename: 'a.pdf' },
      ],
    });
  });

  it('a Uint8Array view is encoded from its own bytes, not its whole buffer', () => {
    const buffer = new Uint8Array([1, 2, 3, 4, 5, 6]);
    const checked = checkInput([{ type: 'image', data: buffer.subarray(2, 4), mediaType: 'image/png' }]);
    expect(checked.parts?.[0]).toMatchObject({ data: Buffer.from([3, 4]).toString('base64') });
  });

  it.each([
    ['not base64', { type: 'image', data: 'not base64!', mediaType: 'image/png' }],
    ['base64 with a bad length', { type: 'image', data: 'iVBORw0', mediaType: 'image/png' }],
    ['a data: URL not base64-encoded', { type: 'image', data: 'data:image/png,abc', mediaType: 'image/png' }],
    [
      'a data: URL of another type',
      { type: 'image', data: `data:image/gif;base64,${PNG_BASE64}`, mediaType: 'image/png' },
    ],
    ['an http: URL', { type: 'image', data: 'http://example.com/a.png', mediaType: 'image/png' }],
    ['a malformed media type', { type: 'image', data: PNG, mediaType: 'png' }],
    ['an image part of a non-image type', { type: 'image', data: PNG, mediaType: 'application/pdf' }],
    ['no media type', { type: 'file', data: PNG }],
    ['an unknown part type', { type: 'audio', data: PNG, mediaType: 'audio/wav' }],
    ['data of another type', { type: 'file', data: 42, mediaType: 'application/pdf' }],
    ['a filename that is not a string', { type: 'file', data: PNG, mediaType: 'application/pdf', filename: 1 }],
  ])('%s is INVALID_ARGS', (_, part) => {
    expectCode(() => checkInput([part]), 'INVALID_ARGS');
  });

  it('neither a string nor an array, or no parts at all, is INVALID_ARGS', () => {
    expectCode(() => checkInput(42), 'INVALID_ARGS');
    expectCode(() => checkInput([]), 'INVALID_ARGS');
  });

  it('each part is held to maxInputBytes (decoded bytes, text as UTF-8), not their sum', () => {
    const eight = { type: 'image', data: PNG, mediaType: 'image/png' } as const;
    expect(checkInput([eight, eight], 8).parts).toHaveLength(2);
    expectCode(() => checkInput([eight], 7), 'INVALID_ARGS');
    expectCode(() => checkInput([{ type: 'image', data: PNG_BASE64, mediaType: 'image/png' }], 7), 'INVALID_ARGS');
    expectCode(() => checkInput([{ type: 'text', text: 'ééé' }], 5), 'INVALID_ARGS');
  });
});

describe('what a wire format carries', () => {
  const part = (type: 'image' | 'file', mediaType: string, data = PNG_BASE64) => ({ type, data, mediaType });

  it('both formats carry the common image types and PDF files', () => {
    for (const format of ['chat-completions', 'anthropic-messages'] as const) {
      checkCarriable([part('image', 'image/webp'), part('file', 'application/pdf')], format);
    }
  });

  it('a media type a format cannot carry is INVALID_ARGS naming it', () => {
    const error = expectCode(() => checkCarriable([part('file', 'text/plain')], 'chat-completions'), 'INVALID_ARGS');
    expect(error.message).toContain('text/plain');
    checkCarriable([part('file', 'text/plain')], 'anthropic-messages');
    const tiff = expectCode(() => checkCarriable([part('image', 'image/tiff')], 'anthropic-messages'), 'INVALID_ARGS');
    expect(tiff.message).toContain('image/tiff');
  });

  it('a file by URL is carried only where the format fetches one', () => {
    const byUrl = part('file', 'application/pdf', 'https://example.com/a.pdf');
    checkCarriable([byUrl], 'anthropic-messages');
    expectCode(() => checkCarriable([byUrl], 'chat-completions'), 'INVALID_ARGS');
  });
});

it("a request's token estimate prices a medium flat, not by its base64 length", () => {
  const big = Buffer.alloc(400_000).toString('base64');
  const parts = [{ type: 'image' as const, data: big, mediaType: 'image/png' }];
  expect(estimateTokens('', [{ role: 'user', text: '', parts }])).toBe(1_000);
  expect(estimateTokens('', [{ role: 'user', text: 'abcd' }])).toBe(1);
});

it('a part as large as the default maxInputBytes is checked as base64 and as a data: URL (no regex recursion)', () => {
  const base64 = Buffer.alloc(DEFAULT_MAX_INPUT_BYTES, 7).toString('base64');
  const parts = checkInput([
    { type: 'image', data: base64, mediaType: 'image/png' },
    { type: 'image', data: `data:image/png;base64,${base64}`, mediaType: 'image/png' },
  ]).parts;
  expect(parts?.map((part) => part.type !== 'text' && part.data === base64)).toEqual([true, true]);
  expectCode(
    () => checkInput([{ type: 'image', data: `${base64.slice(0, -4)}*AAA`, mediaType: 'image/png' }]),
    'INVALID_ARGS',
  );
  expect(isMessageParts(parts)).toBe(true);
});
