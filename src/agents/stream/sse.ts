/**
 * The UI message stream on the wire (AI SDK UI message stream protocol v1): server-sent events, one
 * `data: <chunk JSON>` event per chunk, ended by `data: [DONE]`, with the protocol's headers.
 */
import type { ServerResponse } from 'node:http';
import type { UIMessageChunk, UIMessageStreamResponseInit } from '../../types.js';

export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  // Proxies that buffer responses (nginx) pass server-sent events through as they come.
  'x-accel-buffering': 'no',
};

/** The chunks as the bytes of server-sent events. */
export function toServerSentEvents(chunks: ReadableStream<UIMessageChunk>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return chunks.pipeThrough(
    new TransformStream<UIMessageChunk, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
      },
      flush(controller) {
        controller.enqueue(encoder.encode('data: [DONE]\n\n'));
      },
    }),
  );
}

/** The protocol's headers, then the host's own (a host header of the same name wins). */
export function responseHeaders(init: UIMessageStreamResponseInit | undefined): Record<string, string> {
  const headers: Record<string, string> = { ...UI_MESSAGE_STREAM_HEADERS };
  for (const [name, value] of Object.entries(init?.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

export function uiMessageResponse(
  chunks: ReadableStream<UIMessageChunk>,
  init: UIMessageStreamResponseInit | undefined,
): Response {
  return new Response(toServerSentEvents(chunks), {
    status: init?.status ?? 200,
    ...(init?.statusText === undefined ? {} : { statusText: init.statusText }),
    headers: responseHeaders(init),
  });
}

/**
 * Writes the events onto a Node response, waiting for `drain` when its buffer is full. A client that
 * goes away stops the reading (the run itself goes on: abort it through its `signal`).
 */
export async function pipeToResponse(
  chunks: ReadableStream<UIMessageChunk>,
  response: ServerResponse,
  init: UIMessageStreamResponseInit | undefined,
): Promise<void> {
  const reader = toServerSentEvents(chunks).getReader();
  const stop = (): void => void reader.cancel().catch(() => undefined);
  response.once('close', stop);
  try {
    if (init?.statusText === undefined) response.writeHead(init?.status ?? 200, responseHeaders(init));
    else response.writeHead(init.status ?? 200, init.statusText, responseHeaders(init));
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (response.destroyed) {
        stop();
        return;
      }
      if (!response.write(value)) await drained(response);
    }
    response.end();
  } catch (error) {
    // Ending it normally would tell the client the stream was complete.
    response.destroy(error instanceof Error ? error : undefined);
    throw error;
  } finally {
    response.off('close', stop);
  }
}

/** Resolves on `drain`, or on `close` (nothing more will be written). */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
