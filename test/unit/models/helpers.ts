/** Test helpers for model tests. */
import type { ChatMessage, ModelRequest } from '../../../src/models/types.js';

export function makeRequest(messages: ChatMessage[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    route: { provider: 'p', model: 'm' },
    system: '',
    messages,
    ownStart: 0,
    tools: [],
    signal: new AbortController().signal,
    ...extra,
  };
}

export const user = (text: string): ChatMessage => ({ role: 'user', text });
export const assistant = (
  text: string,
  toolCalls: { callId: string; name: string; arguments: string }[] = [],
): ChatMessage => ({
  role: 'assistant',
  text,
  toolCalls,
});
export const tool = (callId: string, content: string, name = 't'): ChatMessage => ({
  role: 'tool',
  callId,
  name,
  content,
  isError: false,
});
