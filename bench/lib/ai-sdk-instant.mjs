// An AI SDK model (spec v4, the `ai/test` mock) that answers at once: a `noop` tool call per request
// until the conversation holds `steps` tool results, then a short text. Loaded by the module shape in
// each pool thread, and built in the parent for the proxied shape.
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

export function instantModel(modelId, options = {}) {
  const steps = options.steps ?? 100;
  return new MockLanguageModelV4({
    modelId,
    doStream: async ({ prompt }) => {
      const results = prompt.filter((message) => message.role === 'tool').length;
      const parts =
        results < steps
          ? [
              { type: 'tool-call', toolCallId: `c${results}`, toolName: 'noop', input: '{}' },
              { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
            ]
          : [
              { type: 'text-delta', id: 't', delta: 'done' },
              { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
            ];
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}
