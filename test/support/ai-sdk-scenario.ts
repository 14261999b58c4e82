/**
 * One conversation, told twice: as Chat Completions SSE for `@ai-sdk/openai-compatible` (the module
 * shape, against a loopback server) and as AI SDK stream parts for the `ai/test` mocks (the proxied
 * shape). The model first asks for two `echo` calls in one message, then answers from their results;
 * both tellings carry the same ids, arguments, text and usage, so brood must log the same transcript.
 */

import { z } from 'zod';
import { type Brood, defineTool } from '../../src/index.js';
import type { SessionEvent } from '../../src/types.js';
import { type Handler, sseFrames } from '../unit/models/loopback.js';
import { eventsOf } from './events.js';

export const ECHO_CALLS = [
  { id: 'call_a', input: { text: 'alpha' } },
  { id: 'call_b', input: { text: 'beta' } },
];
export const ANSWER = ['the echoes: ', 'alpha and beta'];
export const USAGE = { input: 40, output: 12 };

export const echoTool = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  concurrencySafe: true,
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo:${text}`,
});

/** Whether the conversation so far already holds the echo results (then the model answers). */
export function hasToolResults(messages: { role: string }[]): boolean {
  return messages.some((message) => message.role === 'tool');
}

const usageChunk = {
  id: 'c',
  choices: [],
  usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output },
};

/** The loopback's answer to one Chat Completions request of the conversation. */
export const chatScenario: Handler = (req, res, seen) => {
  const messages = seen.body.messages as { role: string }[];
  if (!hasToolResults(messages)) {
    const toolCalls = ECHO_CALLS.map((call, index) => ({
      index,
      id: call.id,
      type: 'function',
      function: { name: 'echo', arguments: JSON.stringify(call.input) },
    }));
    return sseFrames([
      { data: { id: 'c', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: toolCalls } }] } },
      { data: { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] } },
      { data: usageChunk },
      '[DONE]',
    ])(req, res, seen);
  }
  return sseFrames([
    ...ANSWER.map((content) => ({ data: { id: 'c', choices: [{ index: 0, delta: { content } }] } })),
    { data: { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
    { data: usageChunk },
    '[DONE]',
  ])(req, res, seen);
};

type Version = 'v2' | 'v3' | 'v4';

/** The same answer as stream parts of specification `version` (v2: flat usage and a plain finish reason). */
export function scenarioParts(prompt: { role: string }[], version: Version): Record<string, unknown>[] {
  const usage =
    version === 'v2'
      ? {
          inputTokens: USAGE.input,
          outputTokens: USAGE.output,
          totalTokens: USAGE.input + USAGE.output,
          cachedInputTokens: 0,
          reasoningTokens: 0,
        }
      : {
          inputTokens: { total: USAGE.input, noCache: USAGE.input, cacheRead: 0, cacheWrite: undefined },
          outputTokens: { total: USAGE.output, text: USAGE.output, reasoning: 0 },
        };
  const finish = (reason: string, raw: string) =>
    ({ type: 'finish', usage, finishReason: version === 'v2' ? reason : { unified: reason, raw } }) as const;
  if (!hasToolResults(prompt)) {
    return [
      { type: 'stream-start', warnings: [] },
      ...ECHO_CALLS.map((call) => ({
        type: 'tool-call',
        toolCallId: call.id,
        toolName: 'echo',
        input: JSON.stringify(call.input),
      })),
      finish('tool-calls', 'tool_calls'),
    ];
  }
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    ...ANSWER.map((delta) => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-end', id: 't' },
    finish('stop', 'stop'),
  ];
}

/** What a user compares: the logged assistant messages and tool results, without ids and times. */
export async function transcriptOf(brood: Brood, agentId: string): Promise<unknown[]> {
  const events: SessionEvent[] = await eventsOf(brood, agentId);
  return events
    .filter((event) => event.type === 'assistant/message' || event.type === 'tool/result' || event.type === 'turn/end')
    .map((event) => {
      const { data } = event;
      if (event.type === 'tool/result') return { type: event.type, callId: data.callId, content: data.content };
      if (event.type === 'turn/end') return { type: event.type, stopReason: data.reason, diagnostic: data.diagnostic };
      return { type: event.type, text: data.text, toolCalls: data.toolCalls, usage: data.usage, finish: data.finish };
    });
}
