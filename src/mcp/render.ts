/**
 * What the model sees of an MCP tools/call result: text blocks joined; an image as an image (the
 * result's content parts, which each wire format places where it can) with a placeholder naming its
 * MIME type in the text; audio and resources as a placeholder only (base64 data would only burn
 * context). The whole result stays in the tool result's `value` for hosts. `isError` results become
 * errored tool results (like any tool that throws: the server's text is the message, no brood code,
 * since the tool itself failed rather than the protocol).
 */
import { isMessageParts, type MessagePart } from '../models/content-parts.js';
import { type RenderedValue, withContent } from '../tools/execute.js';
import { ToolAnswerError } from '../tools/thrown.js';

/** The parts of a CallToolResult brood reads; everything else is carried through in `value`. */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
}

/** The server's own error result: an answer the model reads as `Error: <text>`, not a fault of the host's. */
export class McpToolError extends ToolAnswerError {}

export function renderResult(toolName: string, result: McpCallResult): RenderedValue {
  const blocks = Array.isArray(result.content) ? result.content : [];
  let text = blocks.map(renderBlock).join('\n');
  if (text === '' && result.structuredContent !== undefined) text = safeJson(result.structuredContent);
  if (result.isError === true) throw new McpToolError(text === '' ? `MCP tool "${toolName}" reported an error` : text);
  const images = blocks.flatMap(imagePart);
  if (images.length === 0) return withContent(result, text);
  return withContent(result, text, [...(text === '' ? [] : [{ type: 'text' as const, text }]), ...images]);
}

/**
 * An image block as a content part, when the server sent one well-formed (base64 data, a media type);
 * anything else stays its placeholder. The server is not trusted: its block is checked like host input.
 */
function imagePart(block: unknown): MessagePart[] {
  if (typeof block !== 'object' || block === null) return [];
  const { type, data, mimeType } = block as Record<string, unknown>;
  if (type !== 'image' || typeof data !== 'string' || typeof mimeType !== 'string') return [];
  const part = [{ type: 'image', data, mediaType: mimeType.toLowerCase() }];
  return isMessageParts(part) && part[0] !== undefined && !data.startsWith('https:') ? part : [];
}

function renderBlock(block: unknown): string {
  if (typeof block !== 'object' || block === null) return '';
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? b.text : '';
    case 'image':
    case 'audio':
      return `[${b.type}: ${mimeOf(b.mimeType)}]`;
    case 'resource': {
      const resource = (typeof b.resource === 'object' && b.resource !== null ? b.resource : {}) as Record<
        string,
        unknown
      >;
      return `[resource: ${String(resource.uri ?? '?')} (${mimeOf(resource.mimeType)})]`;
    }
    case 'resource_link':
      return `[resource link: ${String(b.uri ?? '?')} (${mimeOf(b.mimeType)})]`;
    default:
      return `[${String(b.type ?? 'unknown')} content]`;
  }
}

function mimeOf(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value : 'unknown type';
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
