/**
 * `brood acp`'s input, in front of the SDK's newline-delimited JSON stream. Lines pass through as
 * they are; a line over the limit is never buffered whole: it is refused with a JSON-RPC error (for
 * its id, when its first bytes show one) and serving goes on. Left to the SDK, one oversized line
 * ends the connection, and with it the process. (Unparseable lines the SDK answers itself: −32700.)
 */
import { pipeline, type Readable, Transform } from 'node:stream';
import { idFromHead, LineSplitter } from '../../util/json-lines.js';

/** The longest request line served: the SDK's own default limit, which this guard now enforces gently. */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;

const INVALID_REQUEST = -32600;
const NEWLINE = Buffer.from('\n');

export interface Refusal {
  /** The JSON-RPC error response to write, a complete line. */
  response: string;
  /** For the log: what was refused. */
  description: string;
}

/** `input`'s lines, without the oversized ones; each of those is handed to `refuse` instead. */
export function guardLines(
  input: Readable,
  refuse: (refusal: Refusal) => void,
  maxBytes = MAX_REQUEST_BYTES,
): Readable {
  const lines = new LineSplitter(maxBytes);
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (const line of lines.push(chunk)) {
        if (line.kind === 'line') this.push(Buffer.concat([line.bytes, NEWLINE]));
        else refuse(refusal(line.head, line.bytes, maxBytes));
      }
      done();
    },
    flush(done) {
      const last = lines.flush();
      if (last?.kind === 'line') this.push(last.bytes);
      else if (last !== undefined) refuse(refusal(last.head, last.bytes, maxBytes));
      done();
    },
  });
  // pipeline, not pipe: the input failing or being destroyed ends the guarded stream too.
  return pipeline(input, guard, () => undefined);
}

function refusal(head: string, bytes: number, maxBytes: number): Refusal {
  const id = idFromHead(head) ?? null;
  const message = `Invalid request: a message of ${bytes} bytes is over the ${maxBytes}-byte limit`;
  const response = `${JSON.stringify({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message } })}\n`;
  return {
    response,
    description: `refused a request line of ${bytes} bytes (id ${JSON.stringify(id)}; limit ${maxBytes})`,
  };
}
