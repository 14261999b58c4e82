/** brood run's stdout: the lead's deltas as they arrive, one line per message, the answer exactly once. */
import { describe, expect, it } from 'vitest';
import { AnswerPrinter } from '../../../src/cli/answer-printer.js';
import type { BroodEvent } from '../../../src/index.js';

const at = { parentId: undefined, depth: 0, time: 1 };

describe('AnswerPrinter', () => {
  it('writes each delta of the lead as it comes, ignores other agents, and does not repeat a streamed answer', async () => {
    const written: string[] = [];
    const printer = new AnswerPrinter('lead', { write: (text: string) => written.push(text) });
    const events: BroodEvent[] = [
      { ...at, agentId: 'lead', type: 'text-delta', turn: 1, delta: 'Looking ' },
      { ...at, agentId: 'child', type: 'text-delta', turn: 1, delta: 'not me' },
      { ...at, agentId: 'lead', type: 'text-delta', turn: 1, delta: 'it up.' },
      {
        ...at,
        agentId: 'lead',
        type: 'assistant-message',
        turn: 1,
        text: 'Looking it up.',
        toolCalls: [{ id: 'c', name: 't' }],
        finish: 'tool-calls',
      },
      { ...at, agentId: 'lead', type: 'text-delta', turn: 1, delta: 'Done.' },
      { ...at, agentId: 'lead', type: 'assistant-message', turn: 1, text: 'Done.', toolCalls: [], finish: 'stop' },
      {
        ...at,
        agentId: 'lead',
        type: 'turn-end',
        turn: 1,
        stopReason: 'completed',
        usage: { inputTokens: 1, outputTokens: 1 },
      },
    ];
    for (const event of events.slice(0, 3)) printer.onEvent(event);
    expect(written).toEqual(['Looking ', 'it up.']); // streamed before the message was complete
    for (const event of events.slice(3)) printer.onEvent(event);
    await printer.caughtUp;
    printer.finish('Done.');
    expect(written.join('')).toBe('Looking it up.\nDone.\n');
  });

  it('an adapter that does not stream still gets its answer printed once', () => {
    const written: string[] = [];
    const printer = new AnswerPrinter('lead', { write: (text: string) => written.push(text) });
    printer.finish('whole answer');
    expect(written.join('')).toBe('whole answer\n');
  });
});
