/** The pure span-building logic: logged session events in, GenAI spans out (no runtime, no threads). */
import * as api from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/models/types.js';
import { SpanBuilder } from '../../../src/telemetry/spans.js';
import type { SessionEvent } from '../../../src/types.js';
import { childrenOf, memoryTracing, spanNamed } from '../../support/otel.js';

const lead = { id: 'lead', parentId: undefined, depth: 0 };
let seq = 0;
const at = (time: number, type: string, data: Record<string, unknown>): SessionEvent => ({
  seq: seq++,
  time,
  type,
  data,
});

function builder(captureContent = false) {
  const { provider, exporter } = memoryTracing();
  const spans = new SpanBuilder(api, provider.getTracer('t'), captureContent, () => undefined, 'inline');
  return { spans, exporter };
}

describe('SpanBuilder', () => {
  it('turns a logged turn into invoke_agent, chat and execute_tool spans with the logged times', () => {
    const { spans, exporter } = builder();
    spans.logged(lead, [
      at(1000, 'turn/start', { turn: 1, messageIds: ['m1'] }),
      at(1001, 'model/request', { provider: 'p', model: 'gpt', system: '', tools: [], threadId: 0 }),
      at(1003.5, 'assistant/message', {
        text: '',
        toolCalls: [{ callId: 'c1', name: 'lookup', arguments: '{}' }],
        usage: { inputTokens: 10, outputTokens: 4 },
        finish: 'tool-calls',
      }),
      at(1004, 'tool/call', { callId: 'c1', name: 'lookup', arguments: '{}' }),
      at(1006, 'tool/result', { callId: 'c1', name: 'lookup', isError: true, content: 'Error', errorCode: 'TIMEOUT' }),
      at(1007, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    const finished = exporter.getFinishedSpans();
    const turn = spanNamed(finished, 'invoke_agent lead');
    const chat = spanNamed(finished, 'chat gpt');
    const tool = spanNamed(finished, 'execute_tool lookup');
    expect(childrenOf(finished, turn)).toHaveLength(2);
    expect(turn.attributes).toMatchObject({
      'brood.delegation.mode': 'top',
      'brood.driver': 'inline',
      'brood.runner': 'host',
    });
    expect(turn.status.code).toBe(api.SpanStatusCode.UNSET);
    expect(chat.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.response.finish_reasons': ['tool-calls'],
    });
    // Built when answered, the chat span still starts at its request: 2.5 ms of logged time, kept at
    // sub-millisecond precision.
    expect(chat.startTime).toEqual([1, 1_000_000]);
    expect(chat.duration).toEqual([0, 2_500_000]);
    expect(turn.startTime).toEqual([1, 0]);
    expect(tool.status.code).toBe(api.SpanStatusCode.ERROR);
    expect(tool.attributes['error.type']).toBe('TIMEOUT');
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
  });

  it('ends a failed turn as an error, with its unanswered request and calls', () => {
    const { spans, exporter } = builder(true);
    spans.logged(lead, [
      at(1, 'turn/start', { turn: 1, messageIds: ['m1'] }),
      at(2, 'tool/call', { callId: 'c9', name: 'slow', arguments: '{"a":1}' }),
      at(3, 'model/request', { provider: 'p', model: 'gpt', system: '', tools: [], threadId: 0 }),
      at(4, 'turn/end', { turn: 1, reason: 'error', diagnostic: 'the thread died' }),
    ]);
    const finished = exporter.getFinishedSpans();
    for (const span of finished) expect(span.status.code).toBe(api.SpanStatusCode.ERROR);
    const turn = spanNamed(finished, 'invoke_agent lead');
    expect(turn.attributes['error.type']).toBe('error');
    expect(turn.status.message).toBe('the thread died');
    expect(spanNamed(finished, 'execute_tool slow').attributes['gen_ai.tool.call.arguments']).toBe('{"a":1}');
  });

  it("nests a foreground child's turn under the call that started it and links a background one", () => {
    const { spans, exporter } = builder();
    spans.logged(lead, [
      at(1, 'turn/start', { turn: 1, messageIds: ['m1'] }),
      at(2, 'tool/call', { callId: 'fg', name: 'subagent', arguments: '{}' }),
      at(2, 'tool/call', { callId: 'bg', name: 'subagent', arguments: '{}' }),
    ]);
    const facts = (id: string) => ({ id, parentId: 'lead', depth: 1 });
    spans.childStarted({ mode: 'foreground', provider: 'spawn', call: spans.callSpan('lead', 'fg') }, facts('a'));
    spans.childStarted({ mode: 'background', provider: 'spawn', call: spans.callSpan('lead', 'bg') }, facts('b'));
    for (const id of ['a', 'b']) {
      spans.logged(facts(id), [
        at(3, 'subagent/descriptor', { provider: 'spawn', mode: 'one-shot', model: {}, label: id.toUpperCase() }),
        at(3, 'turn/start', { turn: 1, messageIds: ['x'] }),
        at(4, 'turn/end', { turn: 1, reason: 'completed' }),
      ]);
    }
    spans.logged(lead, [
      at(5, 'tool/result', { callId: 'fg', name: 'subagent', isError: false, content: 'ok' }),
      at(5, 'tool/result', { callId: 'bg', name: 'subagent', isError: false, content: 'ok' }),
      at(6, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    const finished = exporter.getFinishedSpans();
    const [fgCall, bgCall] = finished.filter((span) => span.name === 'execute_tool subagent');
    const a = spanNamed(finished, 'invoke_agent A');
    const b = spanNamed(finished, 'invoke_agent B');
    expect(a.parentSpanContext?.spanId).toBe(fgCall?.spanContext().spanId);
    expect(a.spanContext().traceId).toBe(fgCall?.spanContext().traceId);
    expect(b.parentSpanContext).toBeUndefined();
    expect(b.links.map((link) => link.context.spanId)).toEqual([bgCall?.spanContext().spanId]);
    expect(b.attributes['brood.delegation.mode']).toBe('background');
  });

  it("keeps a failed turn's diagnostic out of its status without captureContent", () => {
    const { spans, exporter } = builder(false);
    spans.logged(lead, [
      at(1, 'turn/start', { turn: 1, messageIds: ['m1'] }),
      at(2, 'turn/end', { turn: 1, reason: 'error', diagnostic: 'HTTP 401: {"error":"bad key Bearer sk-x"}' }),
    ]);
    const turn = spanNamed(exporter.getFinishedSpans(), 'invoke_agent lead');
    expect(turn.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'error' });
  });

  it('gives each chat span the history its request sent, though the mirror already holds what followed it', () => {
    const { spans, exporter } = builder(true);
    // The parent's mirror of the history: a restored agent starts with one, and each batch's messages
    // are in it before the batch is logged.
    const mirror: ChatMessage[] = [
      { role: 'user', text: 'earlier' },
      { role: 'assistant', text: 'noted', toolCalls: [] },
    ];
    const agent = { ...lead, history: mirror };
    mirror.push({ role: 'user', text: 'a quiet report' }, { role: 'user', text: 'go' });
    spans.logged(agent, [at(1, 'turn/start', { turn: 1, messageIds: ['m2'], joined: ['m1'] })]);
    const call = { callId: 'c1', name: 'look', arguments: '{"q":1}' };
    mirror.push(
      { role: 'assistant', text: 'looking', toolCalls: [call] },
      { role: 'tool', callId: 'c1', name: 'look', content: 'found', isError: false },
    );
    const usage = { inputTokens: 1, outputTokens: 1 };
    spans.logged(agent, [
      at(2, 'model/request', { provider: 'p', model: 'gpt', system: 'be brief', tools: ['look'], threadId: 0 }),
      at(3, 'assistant/message', { text: 'looking', toolCalls: [call], usage, finish: 'tool-calls' }),
      at(4, 'tool/call', call),
      at(5, 'tool/result', { callId: 'c1', name: 'look', isError: false, content: 'found' }),
    ]);
    mirror.push({ role: 'assistant', text: 'done', toolCalls: [] });
    spans.logged(agent, [
      at(6, 'model/request', { provider: 'p', model: 'gpt', system: '', tools: [], threadId: 0 }),
      at(7, 'assistant/message', { text: 'done', toolCalls: [], usage, finish: 'stop' }),
      at(8, 'turn/end', { turn: 1, reason: 'completed' }),
    ]);
    const [first, second] = exporter.getFinishedSpans().filter((span) => span.name === 'chat gpt');
    const sent = (span: typeof first) => JSON.parse(String(span?.attributes['gen_ai.input.messages'])) as unknown[];
    const text = (role: string, content: string) => ({ role, parts: [{ type: 'text', content }] });
    const before = [
      text('user', 'earlier'),
      text('assistant', 'noted'),
      text('user', 'a quiet report'),
      text('user', 'go'),
    ];
    expect(sent(first)).toEqual(before);
    const asked = { type: 'tool_call', id: 'c1', name: 'look', arguments: { q: 1 } };
    expect(sent(second)).toEqual([
      ...before,
      { role: 'assistant', parts: [{ type: 'text', content: 'looking' }, asked] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'found' }] },
    ]);
    expect(first?.attributes['gen_ai.system_instructions']).toBe('[{"type":"text","content":"be brief"}]');
    expect(second?.attributes['gen_ai.system_instructions']).toBeUndefined();
    expect(JSON.parse(String(second?.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'done' }], finish_reason: 'stop' },
    ]);
  });
});
