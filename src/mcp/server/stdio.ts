/**
 * `brood mcp`'s stdio transport: newline-delimited JSON-RPC like the SDK's StdioServerTransport, except
 * that nothing a client writes ends the server silently. A line that is not JSON gets a parse error
 * (−32700), a JSON value that is not a JSON-RPC message an invalid-request error (−32600), and a line
 * over the size cap is refused (−32600, for its id when its first bytes show one) without being
 * buffered whole. (The SDK's transport drops the first two unanswered and closes on the third.)
 */
import type { Readable, Writable } from 'node:stream';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULTS } from '../../defaults.js';
import { idFromHead, type JsonRpcId, type Line, LineSplitter } from '../../util/json-lines.js';

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

export class LineTransport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #input: Readable;
  readonly #output: Writable;
  readonly #lines: LineSplitter;
  readonly #maxBytes: number;
  #closed = false;

  constructor(input: Readable, output: Writable, maxBytes: number = DEFAULTS.mcpServer.maxRequestBytes) {
    this.#input = input;
    this.#output = output;
    this.#maxBytes = maxBytes;
    this.#lines = new LineSplitter(maxBytes);
  }

  async start(): Promise<void> {
    this.#input.on('data', this.#onData);
    this.#input.on('end', this.#onEnd);
    this.#input.on('error', this.#onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off('data', this.#onData);
    this.#input.off('end', this.#onEnd);
    this.#input.off('error', this.#onError);
    this.onclose?.();
  }

  readonly #onData = (chunk: Buffer): void => {
    for (const line of this.#lines.push(chunk)) this.#handle(line);
  };

  readonly #onEnd = (): void => {
    const last = this.#lines.flush();
    if (last !== undefined) this.#handle(last);
    void this.close();
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
    void this.close();
  };

  #handle(line: Line): void {
    if (line.kind === 'oversized') {
      const message = `Invalid request: a message of ${line.bytes} bytes is over the ${this.#maxBytes}-byte limit`;
      void this.#fail(idFromHead(line.head) ?? null, INVALID_REQUEST, message);
      return;
    }
    const text = line.bytes.toString('utf8');
    if (text.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      void this.#fail(null, PARSE_ERROR, `Parse error: ${(error as Error).message}`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      void this.#fail(idOf(json), INVALID_REQUEST, 'Invalid request: not a JSON-RPC 2.0 message');
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #fail(id: JsonRpcId | null, code: number, message: string): Promise<void> {
    return this.#write({ jsonrpc: '2.0', id, error: { code, message } });
  }

  #write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once('drain', () => resolve());
    });
  }
}

function idOf(json: unknown): JsonRpcId | null {
  const id = (json as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
