/** The one shape of a failed model request, shared by the wire adapters. */
import type { Usage } from '../types.js';
import type { ModelResponse } from './types.js';

/** A failed request keeps the text already received (it was shown as deltas); its tool calls never run. */
export function failure(diagnostic: string, partial?: { text: string; usage: Usage }): ModelResponse {
  return {
    text: partial?.text ?? '',
    toolCalls: [],
    finish: 'error',
    usage: partial?.usage ?? { inputTokens: 0, outputTokens: 0 },
    diagnostic,
  };
}
