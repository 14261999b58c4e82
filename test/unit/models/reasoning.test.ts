/** Reasoning blocks and cache counters survive the driver's response check, the session log rebuild and usage sums. */
import { expect, it } from 'vitest';
import { rebuildSession } from '../../../src/agents/history.js';
import { checkModelResponse } from '../../../src/driver/response-check.js';
import { sumUsage } from '../../../src/models/usage.js';

const thinking = { type: 'thinking', thinking: 'hmm', signature: 'sig' } as const;

it('the driver keeps reasoning blocks and cache counters of a valid response, and refuses malformed ones', () => {
  const raw = {
    text: '',
    toolCalls: [{ callId: 'c', name: 't', arguments: '{}' }],
    finish: 'tool-calls',
    usage: { inputTokens: 9, outputTokens: 1, cacheReadTokens: 8 },
    reasoning: [thinking],
  };
  expect(checkModelResponse(raw)).toEqual({ ok: true, response: raw });
  expect(checkModelResponse({ ...raw, reasoning: [{ type: 'thinking', thinking: 1 }] }).ok).toBe(false);
  expect(checkModelResponse({ ...raw, usage: { inputTokens: 1, outputTokens: 1, cacheWriteTokens: -1 } }).ok).toBe(
    false,
  );
});

it('a resumed session rebuilds assistant messages with their reasoning; garbage in the log is dropped', () => {
  const event = (seq: number, type: string, data: Record<string, unknown>) => ({ seq, time: seq, type, data });
  const { history } = rebuildSession([
    event(1, 'user/message', { id: 'm1', text: 'q', source: 'user' }),
    event(2, 'turn/start', { turn: 1, messageIds: ['m1'] }),
    event(3, 'assistant/message', { text: 'a', toolCalls: [], finish: 'stop', reasoning: [thinking] }),
    event(4, 'assistant/message', { text: 'b', toolCalls: [], finish: 'stop', reasoning: 'not blocks' }),
    event(5, 'turn/end', { turn: 1, reason: 'completed' }),
  ]);
  expect(history).toEqual([
    { role: 'user', text: 'q' },
    { role: 'assistant', text: 'a', toolCalls: [], reasoning: [thinking] },
    { role: 'assistant', text: 'b', toolCalls: [] },
  ]);
});

it('usage sums keep cache counters absent until some part reports them', () => {
  expect(sumUsage({ inputTokens: 1, outputTokens: 2 }, { inputTokens: 3, outputTokens: 4 })).toEqual({
    inputTokens: 4,
    outputTokens: 6,
  });
  expect(
    sumUsage(
      { inputTokens: 1, outputTokens: 0, cacheReadTokens: 5 },
      { inputTokens: 1, outputTokens: 0, cacheWriteTokens: 2 },
      { inputTokens: 1, outputTokens: 0, cacheReadTokens: 1 },
    ),
  ).toEqual({
    inputTokens: 3,
    outputTokens: 0,
    cacheReadTokens: 6,
    cacheWriteTokens: 2,
  });
});
