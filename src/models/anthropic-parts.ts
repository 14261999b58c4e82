/**
 * Content parts as Anthropic Messages blocks: images as `image` blocks, files as `document` blocks
 * (base64 source, or a URL one; a plain-text file as a text source). A tool result's media travels
 * inside its `tool_result` block, which takes text and image blocks.
 */
import { isUrlData, type MessagePart, uncarriable } from './content-parts.js';

type Block = Record<string, unknown>;

/** A user message's parts as blocks (an empty text part is left out: the API refuses empty text). */
export function userBlocks(parts: readonly MessagePart[]): Block[] {
  return parts.flatMap((part) => (part.type === 'text' && part.text === '' ? [] : [partBlock(part)]));
}

/** A tool result's content: its text and images (other media stay the placeholder its text has). */
export function toolResultContent(text: string, parts: readonly MessagePart[] | undefined): string | Block[] {
  const images = (parts ?? []).filter(
    (part) => part.type === 'image' && uncarriable(part, 'anthropic-messages') === undefined,
  );
  if (images.length === 0) return text;
  return [...(text === '' ? [] : [{ type: 'text', text }]), ...images.map(partBlock)];
}

function partBlock(part: MessagePart): Block {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (part.type === 'image') return { type: 'image', source: source(part) };
  const block: Block = { type: 'document', source: source(part) };
  if (part.filename !== undefined) block.title = part.filename;
  return block;
}

function source(part: Exclude<MessagePart, { type: 'text' }>): Block {
  if (isUrlData(part.data)) return { type: 'url', url: part.data };
  // Anthropic takes plain-text documents as text, not base64.
  if (part.type === 'file' && part.mediaType === 'text/plain')
    return { type: 'text', media_type: 'text/plain', data: Buffer.from(part.data, 'base64').toString('utf8') };
  return { type: 'base64', media_type: part.mediaType, data: part.data };
}
