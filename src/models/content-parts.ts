/**
 * Content parts: what a message carries besides text (images, files). A host hands them to run, send
 * and stream as `ContentPart[]`; brood checks them once, at the boundary, and keeps them as
 * `MessagePart`s — the same shape with bytes as base64 text, so the session log, the parent's history
 * and the driver's copy all hold one string per part and no request encodes them again.
 */
import type { MessagePart } from '../content-part.js';
import { DEFAULTS } from '../defaults.js';
import { BroodError } from '../errors.js';

export type { ContentPart, MessagePart } from '../content-part.js';

/** A message's input once checked: its text (the text parts joined) and, when it had media, every part in order. */
export interface CheckedInput {
  text: string;
  /** Absent for a plain string (or text-only parts): the message is its text. */
  parts?: MessagePart[];
}

/** createBrood's default `maxInputBytes` (src/defaults.ts). */
export const DEFAULT_MAX_INPUT_BYTES = DEFAULTS.maxInputBytes;

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;
// One character class, no repeated group: a group repeated per 4 characters recurses in V8's regexp
// engine and overflows the stack on a part of a few MB. The length is checked apart (isBase64).
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;

/**
 * Checks a message's input (a string, or content parts) and returns it as brood keeps it. Throws
 * INVALID_ARGS naming the part at fault: an unknown part type, a malformed media type, a media type
 * that does not match the part (`image` parts take `image/*`), bad base64, a URL that is neither
 * `data:` nor `https:`, or a part larger than `maxInputBytes` (decoded bytes; text as UTF-8).
 */
export function checkInput(input: unknown, maxInputBytes: number = DEFAULT_MAX_INPUT_BYTES): CheckedInput {
  if (typeof input === 'string') return { text: input };
  if (!Array.isArray(input))
    throw new BroodError('INVALID_ARGS', 'a message must be a string or an array of content parts');
  if (input.length === 0) throw new BroodError('INVALID_ARGS', 'a message must have at least one content part');
  const parts = input.map((part, index) => checkPart(part, index, maxInputBytes));
  const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
  return parts.every((part) => part.type === 'text') ? { text } : { text, parts };
}

function checkPart(part: unknown, index: number, maxInputBytes: number): MessagePart {
  const where = `content part ${index}`;
  if (typeof part !== 'object' || part === null) throw invalid(`${where} is not an object`);
  const { type } = part as { type?: unknown };
  if (type === 'text') {
    const { text } = part as { text?: unknown };
    if (typeof text !== 'string') throw invalid(`${where} (text) has no string "text"`);
    checkSize(Buffer.byteLength(text, 'utf8'), where, maxInputBytes);
    return { type: 'text', text };
  }
  if (type !== 'image' && type !== 'file')
    throw invalid(`${where} has type ${JSON.stringify(type)} (expected "text", "image" or "file")`);
  const fields = part as { data?: unknown; mediaType?: unknown; filename?: unknown };
  const mediaType = checkMediaType(fields.mediaType, type, where);
  const data = checkData(fields.data, mediaType, `${where} (${type})`, maxInputBytes);
  if (type === 'image') return { type, data, mediaType };
  if (fields.filename !== undefined && typeof fields.filename !== 'string')
    throw invalid(`${where} (file) has a filename that is not a string`);
  return fields.filename === undefined
    ? { type, data, mediaType }
    : { type, data, mediaType, filename: fields.filename };
}

function checkMediaType(value: unknown, type: 'image' | 'file', where: string): string {
  if (typeof value !== 'string') throw invalid(`${where} (${type}) has no string "mediaType"`);
  const mediaType = value.trim().toLowerCase();
  if (!MEDIA_TYPE.test(mediaType)) throw invalid(`${where} has a malformed media type "${value}"`);
  if (type === 'image' && !mediaType.startsWith('image/'))
    throw invalid(`${where} is an image with media type "${mediaType}" (an image part takes image/*)`);
  return mediaType;
}

/** The part's bytes as base64, or its https: URL as given. */
function checkData(data: unknown, mediaType: string, where: string, maxInputBytes: number): string {
  if (data instanceof Uint8Array) {
    checkSize(data.byteLength, where, maxInputBytes);
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  }
  if (typeof data !== 'string') throw invalid(`${where} has "data" that is neither a Uint8Array nor a string`);
  if (data.startsWith('https:')) return checkHttpsUrl(data, where);
  const base64 = data.startsWith('data:') ? dataUrlBase64(data, mediaType, where) : data;
  if (!isBase64(base64)) throw invalid(`${where} has "data" that is not base64, a data: URL or an https: URL`);
  checkSize(base64DecodedLength(base64), where, maxInputBytes);
  return base64;
}

function checkHttpsUrl(data: string, where: string): string {
  if (!URL.canParse(data)) throw invalid(`${where} has a malformed https: URL`);
  return data;
}

/** The base64 payload of a `data:` URL, whose media type (when it names one) must be the part's. */
function dataUrlBase64(url: string, mediaType: string, where: string): string {
  const match = DATA_URL.exec(url);
  if (!match) throw invalid(`${where} has a malformed data: URL`);
  const [, urlType = '', params = '', payload = ''] = match;
  if (!params.split(';').includes('base64')) throw invalid(`${where} has a data: URL that is not base64-encoded`);
  if (urlType !== '' && urlType.trim().toLowerCase() !== mediaType)
    throw invalid(`${where} has a data: URL of type "${urlType}" but mediaType "${mediaType}"`);
  return payload;
}

function isBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_CHARS.test(text);
}

export function base64DecodedLength(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

function checkSize(bytes: number, where: string, maxInputBytes: number): void {
  if (bytes > maxInputBytes)
    throw new BroodError('INVALID_ARGS', `${where} is ${bytes} bytes, over maxInputBytes (${maxInputBytes})`, {
      details: { bytes, maxInputBytes },
    });
}

function invalid(message: string): BroodError {
  return new BroodError('INVALID_ARGS', message);
}

/** Whether a kept part's data is a URL (the provider fetches it) rather than base64. */
export function isUrlData(data: string): boolean {
  return data.startsWith('https:');
}

/** A message's parts, or its text as the one part (for adapters that always send parts). */
export function partsOf(message: { text: string; parts?: MessagePart[] | undefined }): MessagePart[] {
  return message.parts ?? [{ type: 'text', text: message.text }];
}

/** The two wire formats brood speaks over HTTP; each carries only some media types. */
export type PartFormat = 'chat-completions' | 'anthropic-messages';

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
/** What each format carries, per part type, as base64; a URL only where the format takes one. */
const CARRIED: Record<PartFormat, { image: string[]; file: string[]; fileUrl: string[] }> = {
  // Chat Completions: image_url parts (a data: or https: URL); file parts take PDF as file_data only.
  'chat-completions': { image: IMAGE_TYPES, file: ['application/pdf'], fileUrl: [] },
  // Anthropic Messages: image blocks; document blocks take PDF (base64 or URL) and plain text (base64).
  'anthropic-messages': { image: IMAGE_TYPES, file: ['application/pdf', 'text/plain'], fileUrl: ['application/pdf'] },
};

/** Why `format` cannot carry this part (naming its media type), or undefined when it can. */
export function uncarriable(part: MessagePart, format: PartFormat): string | undefined {
  if (part.type === 'text') return undefined;
  const carried = CARRIED[format];
  const types = part.type === 'file' && isUrlData(part.data) ? carried.fileUrl : carried[part.type];
  if (types.includes(part.mediaType)) return undefined;
  const how = part.type === 'file' && isUrlData(part.data) ? ' by URL' : '';
  return `the ${format} format cannot carry ${part.type} parts of media type "${part.mediaType}"${how}`;
}

/** Throws INVALID_ARGS naming the first part `format` cannot carry. */
export function checkCarriable(parts: readonly MessagePart[] | undefined, format: PartFormat): void {
  for (const part of parts ?? []) {
    if (part.type === 'text') continue;
    const reason = uncarriable(part, format);
    if (reason !== undefined) throw new BroodError('INVALID_ARGS', reason, { details: { mediaType: part.mediaType } });
  }
}

/** `{ parts }` when there are any: spread into a message so a text-only one keeps its old shape. */
export function partsField(parts: MessagePart[] | undefined): { parts?: MessagePart[] } {
  return parts === undefined ? {} : { parts };
}

/** Whether `value` is content parts as brood keeps them (read back from a session or from Redis). */
export function isMessageParts(value: unknown): value is MessagePart[] {
  return Array.isArray(value) && value.every(isMessagePart);
}

function isMessagePart(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const part = value as Record<string, unknown>;
  if (part.type === 'text') return typeof part.text === 'string';
  if (part.type !== 'image' && part.type !== 'file') return false;
  if (typeof part.mediaType !== 'string' || !MEDIA_TYPE.test(part.mediaType)) return false;
  if (part.type === 'image' && !part.mediaType.startsWith('image/')) return false;
  if (part.filename !== undefined && (part.type !== 'file' || typeof part.filename !== 'string')) return false;
  const { data } = part;
  return typeof data === 'string' && (isUrlData(data) ? URL.canParse(data) : isBase64(data));
}

/**
 * A tool result's text for parts: the text parts, and a placeholder naming each medium's type (what
 * text-only readers — the session's `content`, a format that drops the medium — see in its place).
 */
export function textWithPlaceholders(parts: readonly MessagePart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : `[${part.type}: ${part.mediaType}]`)).join('\n');
}
