/**
 * The translation of a turn's events into UI message chunks, for what the end-to-end tests cannot
 * produce with streaming models: responses that arrive whole, a child's several responses, results
 * of calls the reader never saw start.
 */
import { describe, expect, it } from 'vitest';
import { UIMessageChunks } from '../../../src/agents/stream/ui-message-chunks.js';
import type { BroodEvent } from '../../../src/index.js';

const lead = { agentId: 'lead', parentId: undefined, depth: 0, time: 1 };
const child = { agentId: 'child', parentId: 'lead', depth: 1, time: 1 };

function translate(events: BroodEvent[]): unknown[] {
  const chunks = new UIMessageChunks('lead');
  return events.flatMap((event) => chunks.event(event));
}

describe('UI message chunks', () => {
  it('a response that arrives without deltas is sent whole as one text part; an empty one sends nothing', () => {
    const message = { type: 'assistant-message' as const, turn: 1, toolCalls: [], finish: 'stop' as const };
    expect(
      translate([
        { ...lead, ...message, text: 'All at once.' },
        { ...lead, ...message, text: '' },
      ]),
    ).toEqual([
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'All at once.' },
      { type: 'text-end', id: 'text-1' },
    ]);
  });

  it("a child's responses accumulate into one data part, separated by a blank line, whether streamed or whole", () => {
    const message = { type: 'assistant-message' as const, turn: 1, toolCalls: [], finish: 'stop' as const };
    const chunks = translate([
      { ...child, type: 'text-delta', turn: 1, delta: 'Looking ' },
      { ...child, type: 'text-delta', turn: 1, delta: 'it up.' },
      { ...child, ...message, text: 'Looking it up.' },
      { ...child, ...message, text: 'Found it.' },
    ]);
    expect(chunks.map((chunk) => (chunk as { data: { text: string } }).data.text)).toEqual([
      'Looking ',
      'Looking it up.',
      'Looking it up.\n\nFound it.',
    ]);
    expect(chunks.at(-1)).toEqual({
      type: 'data-subagent',
      id: 'child',
      data: { agentId: 'child', parentId: 'lead', depth: 1, text: 'Looking it up.\n\nFound it.', status: 'running' },
    });
  });

  it('a tool result whose call was not announced is left out (the client could not place it)', () => {
    const end = { type: 'tool-end', turn: 1, callId: 'c1', name: 'lookup', isError: false, content: 'x' } as const;
    expect(translate([{ ...lead, ...end }])).toEqual([]);
  });

  it('a run that failed before its turn: error, then finish without metadata', () => {
    const chunks = new UIMessageChunks('lead');
    expect(chunks.finish({ error: 'agent lead is disposed' })).toEqual([
      { type: 'error', errorText: 'agent lead is disposed' },
      { type: 'finish' },
    ]);
  });
});
