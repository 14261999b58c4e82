/** Minimal Server-Sent Events reader over a fetch body: yields each event's `data` payload. */

/**
 * Yields the joined `data:` lines of each event (multi-line data joined by '\n', per the SSE spec).
 * Comments (`:`), `event:`/`id:`/`retry:` fields are ignored: Chat Completions only uses data.
 * A trailing event without a blank line is still delivered when the stream ends.
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A chunk ending in '\r' may be half of a CRLF; hold it back so it does not read as a blank line.
      const hold = !done && buffer.endsWith('\r') ? '\r' : '';
      const lines = (hold === '' ? buffer : buffer.slice(0, -1)).split(/\r\n|\r|\n/);
      // The last piece is an incomplete line unless the stream ended.
      buffer = done ? '' : (lines.pop() ?? '') + hold;
      for (const line of lines) {
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
      }
      if (done) break;
    }
    if (data.length > 0) yield data.join('\n');
  } finally {
    // Stops the download when the consumer quits early ([DONE], abort, malformed chunk).
    await reader.cancel().catch(() => {});
  }
}
