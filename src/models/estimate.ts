/**
 * A request's token cost before it is made, for tokensPerMinute: about four characters a token over
 * what is sent. Deliberately cheap (it runs before every governed request); the usage the response
 * reports corrects the bucket afterwards.
 */
import type { ChatMessage } from './types.js';

const CHARS_PER_TOKEN = 4;

export function estimateTokens(system: string, messages: readonly ChatMessage[]): number {
  let chars = system.length;
  for (const message of messages) {
    if (message.role === 'tool') chars += message.content.length;
    else chars += message.text.length;
    if (message.role === 'assistant') for (const call of message.toolCalls) chars += call.arguments.length;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
