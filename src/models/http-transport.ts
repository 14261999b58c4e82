/**
 * One POST for the wire adapters, on Node's own HTTP client with a keep-alive agent per thread.
 *
 * Not fetch: a wide fan-out holds one request in flight per running child, and with 1,000 requests
 * in flight in one worker, fetch held 26.1 KB of heap per request (its web streams, signals and
 * Request/Response objects, several of them with a hidden class of their own) against 7.4 KB for
 * node:http over the same keep-alive connections (docs/benchmarks.md).
 */
import { type ClientRequest, Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { epochNow } from '../clock.js';
import type { Cancellation } from '../util/lazy-abort.js';

/** What the adapters read of an answer: its status, headers and body. */
export interface HttpResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  /** A response header (first value when repeated); undefined when absent. */
  header(name: string): string | undefined;
  /** The whole body as text; rejects when the connection drops or the request is aborted. */
  text(): Promise<string>;
  /** The body's chunks, read once; leaving the loop early reads what is left, briefly (see releaseEarly). */
  readonly body: AsyncIterable<Uint8Array>;
  /** Drops the body unread, so its connection can serve the next request. */
  discard(): void;
}

export interface HttpPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Aborting destroys the request: its promise, or its body's reader, rejects. */
  signal: Cancellation;
  /** Told when the request has been written to its socket (epoch ms). */
  onWrite?: (at: number) => void;
}

// LIFO: the connection used last is the least likely to have been closed by the server meanwhile.
const agents = {
  http: new HttpAgent({ keepAlive: true, scheduling: 'lifo' }),
  https: new HttpsAgent({ keepAlive: true, scheduling: 'lifo' }),
};

/** Resolves with the response once its headers arrive; rejects on a network error or an abort. */
export function post(call: HttpPost): Promise<HttpResponse> {
  const url = new URL(call.url);
  const secure = url.protocol === 'https:';
  const headers = { ...call.headers, 'content-length': String(Buffer.byteLength(call.body)) };
  return new Promise((resolve, reject) => {
    const request = (secure ? httpsRequest : httpRequest)(
      url,
      { method: 'POST', headers, agent: secure ? agents.https : agents.http },
      (response) => resolve(new NodeResponse(response)),
    );
    // Persistent: an error after the response arrived (the connection dropping mid-body) reaches the
    // body's reader; here it must only never go unhandled.
    request.on('error', reject);
    abortWith(call.signal, request);
    const { onWrite } = call;
    if (onWrite) request.once('finish', () => onWrite(epochNow()));
    request.end(call.body);
  });
}

class NodeResponse implements HttpResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  /** The body as sent, decompressed when the server compressed it (only if a configured header asked). */
  private readonly content: Readable;

  constructor(private readonly response: IncomingMessage) {
    // A body nobody reads (discarded, or a path that returns before reading) may still fail; whoever
    // reads it sees the failure through its own listener.
    response.on('error', ignore);
    this.content = decoded(response);
    if (this.content !== response) this.content.on('error', ignore);
    this.status = response.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    this.statusText = response.statusMessage ?? '';
  }

  header(name: string): string | undefined {
    const value = this.response.headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  }

  get body(): AsyncIterable<Uint8Array> {
    const { response, content } = this;
    return {
      [Symbol.asyncIterator]: () => {
        const chunks = content[Symbol.asyncIterator]();
        return {
          next: () => chunks.next(),
          return: async (value?: unknown) => {
            await releaseEarly(response, content);
            return { done: true as const, value };
          },
        };
      },
    };
  }

  text(): Promise<string> {
    const { response, content } = this;
    content.setEncoding('utf8');
    return new Promise((resolve, reject) => {
      let text = '';
      content.on('data', (chunk: string) => {
        text += chunk;
      });
      content.once('end', () => resolve(text));
      content.once('error', reject);
      response.once('error', reject);
      // A connection that drops mid-body ends the message without 'end' (Node emits 'aborted', then 'close').
      response.once('close', () => {
        if (!response.complete) reject(new Error('the connection closed before the response ended'));
      });
    });
  }

  discard(): void {
    this.content.resume();
    this.response.resume();
  }
}

function ignore(): void {}

/**
 * The cancellation destroys the request until it closes (its response read or dropped), as
 * http.request's own `signal` option would; brood's cancellations are not always AbortSignals.
 */
function abortWith(cancel: Cancellation, request: ClientRequest): void {
  const destroy = (): void => void request.destroy(new Error('the request was aborted'));
  if (cancel.aborted) {
    destroy();
    return;
  }
  cancel.addEventListener('abort', destroy, { once: true });
  request.once('close', () => cancel.removeEventListener('abort', destroy));
}

/** How long a body its reader left early may take to end before its connection is given up. */
const TAIL_MS = 1_000;

/**
 * A reader that stops at the protocol's end marker (`[DONE]`, `message_stop`) leaves only the
 * response's end unread: reading it lets the connection serve the next request instead of a new
 * connection (and, over TLS, a new handshake) per request. The reader waits for that end, so a request
 * made right after finds the connection free; a server ends a response right after its end marker,
 * and one that does not within TAIL_MS has its connection dropped (and held its answer that long).
 */
function releaseEarly(response: IncomingMessage, content: Readable): Promise<void> {
  // `complete` is not enough: the parser may have the whole message while its end is still unread,
  // and the connection is only handed back once the stream's 'end' is emitted.
  if (response.readableEnded || response.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const giveUp = setTimeout(() => response.destroy(), TAIL_MS).unref();
    const ended = (): void => {
      clearTimeout(giveUp);
      resolve();
    };
    response.once('end', ended);
    response.once('close', ended);
    if (content !== response) content.resume();
    response.resume();
  });
}

/** The body through a decompressor when the server compressed it (`content-encoding`), else as is. */
function decoded(response: IncomingMessage): Readable {
  const encoding = response.headers['content-encoding']?.trim().toLowerCase();
  const decompressor =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  return decompressor === undefined ? response : response.pipe(decompressor);
}
