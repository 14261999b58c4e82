/** Minimal Server-Sent Events reader over a response body: yields each event's name and `data` payload. */

export interface SseEvent {
  /** The `event:` field; 'message' when absent (per the SSE spec). */
  event: string;
  /** The joined `data:` lines (multi-line data joined by '\n'). */
  data: string;
}

/**
 * Comments (`:`), `id:` and `retry:` fields are ignored. An event without data is not delivered
 * (per the spec). A trailing event without a blank line is still delivered when the stream ends.
 */
export async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const chunks = body[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  try {
    for (;;) {
      const { done, value } = await chunks.next();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A chunk ending in '\r' may be half of a CRLF; hold it back so it does not read as a blank line.
      const hold = !done && buffer.endsWith('\r') ? '\r' : '';
      const lines = (hold === '' ? buffer : buffer.slice(0, -1)).split(/\r\n|\r|\n/);
      // The last piece is an incomplete line unless the stream ended.
      buffer = done ? '' : (lines.pop() ?? '') + hold;
      for (const line of lines) {
        if (line === '') {
          if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n') };
          data = [];
          event = '';
        } else if (line.startsWith('data:')) {
          data.push(fieldValue(line, 5));
        } else if (line.startsWith('event:')) {
          event = fieldValue(line, 6);
        }
      }
      if (done) break;
    }
    if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n') };
  } finally {
    // Stops the download when the consumer quits early ([DONE], abort, malformed chunk).
    await chunks.return?.()?.catch(() => {});
  }
}

/** The value after `name:`, minus the one optional space the spec allows. */
function fieldValue(line: string, nameLength: number): string {
  return line.slice(line[nameLength] === ' ' ? nameLength + 1 : nameLength);
}
