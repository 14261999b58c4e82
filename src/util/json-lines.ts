/**
 * Newline-delimited JSON-RPC framing with a cap on a line's size, for the stdio protocols brood reads
 * from another process (an MCP server's answers, an ACP client's requests). A line over the cap is
 * never buffered whole: its first bytes are kept, the rest is skipped up to its newline, and it is
 * reported once as oversized, so the reader can refuse that one message and go on with the next.
 */

export type Line = { kind: 'line'; bytes: Buffer } | { kind: 'oversized'; bytes: number; head: string };

/** How much of an oversized line is kept: enough to find its top-level `id`. */
const HEAD_BYTES = 4_096;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export class LineSplitter {
  readonly #maxBytes: number;
  #parts: Buffer[] = [];
  #length = 0;
  /** Set while skipping the rest of an oversized line: its head and how many bytes it had. */
  #oversized: { head: string; bytes: number } | undefined;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The complete lines in `chunk` (with what came before it), without their line endings. */
  *push(chunk: Buffer): Generator<Line> {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      this.#take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return;
      yield this.#finish();
      start = newline + 1;
    }
  }

  /** The last line when the stream ends without a newline, if any. */
  flush(): Line | undefined {
    return this.#length === 0 && this.#oversized === undefined ? undefined : this.#finish();
  }

  #take(part: Buffer): void {
    if (this.#oversized !== undefined) {
      this.#oversized.bytes += part.length;
      return;
    }
    if (this.#length + part.length <= this.#maxBytes) {
      this.#parts.push(part);
      this.#length += part.length;
      return;
    }
    const head = Buffer.concat([...this.#parts, part.subarray(0, HEAD_BYTES)]).subarray(0, HEAD_BYTES);
    this.#oversized = { head: head.toString('utf8'), bytes: this.#length + part.length };
    this.#parts = [];
    this.#length = 0;
  }

  #finish(): Line {
    const oversized = this.#oversized;
    this.#oversized = undefined;
    if (oversized !== undefined) return { kind: 'oversized', ...oversized };
    const [only, ...more] = this.#parts;
    let bytes = only !== undefined && more.length === 0 ? only : Buffer.concat(this.#parts, this.#length);
    this.#parts = [];
    this.#length = 0;
    if (bytes[bytes.length - 1] === CARRIAGE_RETURN) bytes = bytes.subarray(0, -1);
    return { kind: 'line', bytes };
  }
}

export type JsonRpcId = string | number;

/**
 * The top-level `id` of a JSON object from its first bytes, when it is there: what lets a reader
 * answer (or fail) the one request an oversized line was about. Strings and nesting are skipped, so
 * an `"id"` inside `params` is not taken for it.
 */
export function idFromHead(head: string): JsonRpcId | undefined {
  let depth = 0;
  for (let i = 0; i < head.length; i++) {
    const char = head[i];
    if (char === '"') {
      const end = stringEnd(head, i);
      if (end === -1) return undefined;
      if (depth === 1 && head.slice(i, end + 1) === '"id"') {
        const value = /^\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*[,}]/.exec(head.slice(end + 1))?.[1];
        if (value !== undefined) return JSON.parse(value) as JsonRpcId;
      }
      i = end;
    } else if (char === '{' || char === '[') depth += 1;
    else if (char === '}' || char === ']') depth -= 1;
  }
  return undefined;
}

/** Index of the quote closing the string that opens at `start`, or -1 when the head ends first. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '"') return i;
  }
  return -1;
}
