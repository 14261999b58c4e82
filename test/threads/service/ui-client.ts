/**
 * The browser's side of the UI message stream, with the real `ai` package: the SSE body parsed and
 * validated against its chunk schema (what useChat's transport does), then assembled into a message
 * by readUIMessageStream.
 */
import {
  parseJsonEventStream,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema,
} from 'ai';

export interface ReadMessage {
  /** Every chunk, in order, as the client validated it. */
  chunks: UIMessageChunk[];
  /** The assistant message the client ends with (none when no chunk changed it). */
  message: UIMessage | undefined;
  /** Errors the client reported (an `error` chunk, or a chunk it could not apply). */
  errors: string[];
}

/** Reads an SSE body to its end as a client would. */
export async function readAsClient(body: ReadableStream<Uint8Array>): Promise<ReadMessage> {
  const chunks: UIMessageChunk[] = [];
  const errors: string[] = [];
  const parsed = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<{ success: boolean; value?: UIMessageChunk; error?: unknown }, UIMessageChunk>({
      transform(result, controller) {
        if (!result.success) throw result.error;
        // A copy: the client keeps the first chunk of a data part as the part and updates it in place.
        chunks.push(structuredClone(result.value as UIMessageChunk));
        controller.enqueue(result.value as UIMessageChunk);
      },
    }),
  );
  let message: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream({
    stream: parsed,
    terminateOnError: false,
    onError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
  })) {
    message = snapshot;
  }
  return { chunks, message, errors };
}

/** The raw body as text (the wire format itself). */
export async function bodyText(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text();
}
