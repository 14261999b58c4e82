/**
 * A request's token cost before it is made, for tokensPerMinute: about four characters a token over
 * what is sent. Deliberately cheap (it runs before every governed request); the usage the response
 * reports corrects the bucket afterwards.
 */
import type { ChatMessage } from './types.js';

const CHARS_PER_TOKEN = 4;
/**
 * An image or a file is priced by the provider from its pixels or pages, not its bytes: a flat guess
 * per medium (about a megapixel image's cost), never its base64 length, which would overstate it a hundredfold.
 */
const TOKENS_PER_MEDIUM = 1_000;

export function estimateTokens(system: string, messages: readonly ChatMessage[]): number {
  let chars = system.length;
  let media = 0;
  for (const message of messages) {
    if (message.role === 'tool') chars += message.content.length;
    else chars += message.text.length;
    if (message.role === 'assistant') for (const call of message.toolCalls) chars += call.arguments.length;
    else for (const part of message.parts ?? []) if (part.type !== 'text') media += 1;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + media * TOKENS_PER_MEDIUM;
}
