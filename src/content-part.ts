/**
 * What a message carries besides text: the public `ContentPart` a host hands to run, send, stream and
 * history, and the `MessagePart` brood keeps once it is checked (src/models/content-parts.ts checks and
 * maps them). A leaf: the Agent's types and the tool results name these, below every folder.
 */

/** What a host may put in a message (run, send, stream). */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; data: Uint8Array | string /* base64 or a data:/https: URL */; mediaType: string }
  | { type: 'file'; data: Uint8Array | string; mediaType: string; filename?: string };

/**
 * A content part as brood keeps it: `data` is base64 (no `data:` prefix) or an `https:` URL the provider
 * fetches itself (base64 has no `:`, so the two never collide). The media type is lower-cased.
 */
export type MessagePart =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mediaType: string }
  | { type: 'file'; data: string; mediaType: string; filename?: string };
