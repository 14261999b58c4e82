/**
 * The fetch the Streamable HTTP and legacy SSE transports use: it reads each answer before the SDK
 * does. The SDK drops a message it cannot parse from an event stream (it reports it to `onerror` and
 * the request waits out its timeout); here an answer to a request that is malformed (`result: null`,
 * say) becomes an error answer to that request with the cause in one line, as on stdio
 * (stdio-lines.ts), so the call fails at once and the connection stays up. Everything else —
 * redirects, errors, valid messages, lines that are not JSON — passes through unchanged.
 */
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { answerToMalformed } from './stdio-lines.js';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A made-up answer for `value` when it is a malformed answer to a request; undefined when it may pass. */
function replacement(value: unknown): unknown {
  return JSONRPCMessageSchema.safeParse(value).success ? undefined : answerToMalformed(value);
}

function mediaType(header: string | null): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function withBody(response: Response, body: string | ReadableStream<Uint8Array>): Response {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

async function checkedJson(response: Response): Promise<Response> {
  const text = await response.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return withBody(response, text); // the SDK says what is wrong with it
  }
  const messages = Array.isArray(value) ? value : [value];
  const fixed = messages.map((message) => replacement(message) ?? message);
  if (fixed.every((message, index) => message === messages[index])) return withBody(response, text);
  return withBody(response, JSON.stringify(Array.isArray(value) ? fixed : fixed[0]));
}

/** One event of a stream, rewritten when its data is a malformed answer. */
function checkedEvent(block: string): string {
  const lines = block.split(/\r\n|\r|\n/);
  const type =
    lines
      .find((line) => line.startsWith('event:'))
      ?.slice(6)
      .trim() ?? 'message';
  const data = lines
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
  if (type !== 'message' || data.length === 0) return block;
  let value: unknown;
  try {
    value = JSON.parse(data.join('\n'));
  } catch {
    return block;
  }
  const fixed = replacement(value);
  if (fixed === undefined) return block;
  return [...lines.filter((line) => !line.startsWith('data:')), `data: ${JSON.stringify(fixed)}`].join('\n');
}

const EVENT_END = /\r\n\r\n|\n\n|\r\r/;

function checkedEventStream(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  return new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      for (let end = pending.search(EVENT_END); end !== -1; end = pending.search(EVENT_END)) {
        const separator = pending.startsWith('\r\n\r\n', end) ? 4 : 2;
        controller.enqueue(encoder.encode(`${checkedEvent(pending.slice(0, end))}\n\n`));
        pending = pending.slice(end + separator);
      }
    },
    flush(controller) {
      pending += decoder.decode();
      if (pending !== '') controller.enqueue(encoder.encode(pending));
    },
  });
}

export function checkingFetch(base: Fetch = fetch): Fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.ok || response.body === null) return response;
    const type = mediaType(response.headers.get('content-type'));
    if (type === 'application/json') return checkedJson(response);
    if (type === 'text/event-stream') return withBody(response, response.body.pipeThrough(checkedEventStream()));
    return response;
  };
}
