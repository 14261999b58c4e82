/** A session's content parts read back: well-formed ones rejoin the history, malformed ones are SESSION_CORRUPT. */
import { expect, it } from 'vitest';
import { rebuildSession } from '../../../src/agents/history.js';
import { expectCode } from '../../support/codes.js';

const event = (seq: number, type: string, data: Record<string, unknown>) => ({ seq, time: seq, type, data });
const image = { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' };

it("a user message's and a tool result's parts rejoin the history; unclaimed messages keep theirs", () => {
  const rebuilt = rebuildSession([
    event(1, 'user/message', {
      id: 'm1',
      text: 'look',
      parts: [{ type: 'text', text: 'look' }, image],
      source: 'user',
    }),
    event(2, 'turn/start', { turn: 1, messageIds: ['m1'] }),
    event(3, 'assistant/message', {
      text: '',
      toolCalls: [{ callId: 'c1', name: 'chart', arguments: '{}' }],
      finish: 'tool-calls',
    }),
    event(4, 'tool/result', {
      callId: 'c1',
      name: 'chart',
      isError: false,
      content: '[image: image/png]',
      parts: [image],
    }),
    event(5, 'assistant/message', { text: 'a chart', toolCalls: [], finish: 'stop' }),
    event(6, 'turn/end', { turn: 1, reason: 'completed' }),
    event(7, 'user/message', { id: 'm2', text: '', parts: [image], source: 'user' }),
  ]);
  expect(rebuilt.history[0]).toEqual({ role: 'user', text: 'look', parts: [{ type: 'text', text: 'look' }, image] });
  expect(rebuilt.history[2]).toMatchObject({ role: 'tool', callId: 'c1', parts: [image] });
  expect(rebuilt.unclaimed).toEqual([{ id: 'm2', text: '', parts: [image], source: 'user' }]);
});

it.each([
  ['not an array', 'iVBORw0KGgo='],
  ['bad base64', [{ ...image, data: 'not base64!' }]],
  ['an image of a non-image type', [{ ...image, mediaType: 'application/pdf' }]],
  ['an unknown part type', [{ type: 'audio', data: 'iVBORw0KGgo=', mediaType: 'audio/wav' }]],
])('parts that are %s are SESSION_CORRUPT', (_, parts) => {
  expectCode(
    () => rebuildSession([event(1, 'user/message', { id: 'm1', text: '', parts, source: 'user' })]),
    'SESSION_CORRUPT',
  );
});
