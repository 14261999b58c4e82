/**
 * Newline-delimited JSON-RPC over an agent process's stdio, as an SDK `Stream`, with a protocol
 * watchdog in front of the SDK: stdout must carry protocol only, so a line that is not a JSON-RPC
 * object, or a response to a request we never sent (or already had answered), is reported as a fault
 * instead of being logged and skipped. The provider treats a fault like a dead process: the agent
 * cannot be trusted any more, so its children end `error` with a PROVIDER_FAILED diagnostic.
 */
import type { Readable, Writable } from 'node:stream';

type Id = string | number;
interface Message {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
}

/** Longest stdout line accepted (the SDK's own default message limit is of the same order). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface FramedStream {
  stream: { readable: ReadableStream<object>; writable: WritableStream<object> };
}

export function frameStdio(stdout: Readable, stdin: Writable, onFault: (reason: string) => void): FramedStream {
  const pending = new Set<Id>();
  let faulted = false;
  const fault = (reason: string): void => {
    if (faulted) return;
    faulted = true;
    onFault(reason);
  };
  const readable = new ReadableStream<object>({
    start(controller) {
      let buffered = '';
      stdout.setEncoding('utf8');
      stdout.on('data', (chunk: string) => {
        if (faulted) return;
        buffered += chunk;
        let newline = buffered.indexOf('\n');
        while (newline !== -1 && !faulted) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line !== '') accept(line, controller);
          newline = buffered.indexOf('\n');
        }
        if (buffered.length > MAX_LINE_BYTES) fault(`a stdout line longer than ${MAX_LINE_BYTES} bytes`);
      });
      stdout.on('end', () => {
        if (!faulted && buffered.trim() !== '') accept(buffered.trim(), controller);
        buffered = '';
        try {
          controller.close();
        } catch {
          // Already errored or closed.
        }
      });
    },
  });
  const accept = (line: string, controller: ReadableStreamDefaultController<object>): void => {
    const message = parseLine(line);
    if (typeof message === 'string') {
      fault(message);
      return;
    }
    if (message.method === undefined) {
      const id = message.id as Id;
      if (!pending.delete(id)) {
        fault(`a response to unknown request id ${JSON.stringify(message.id)}`);
        return;
      }
    }
    controller.enqueue(message);
  };
  const writable = new WritableStream<object>({
    write(message) {
      const outgoing = message as Message;
      if (typeof outgoing.method === 'string' && isId(outgoing.id)) pending.add(outgoing.id);
      if (stdin.destroyed || !stdin.writable) return;
      return new Promise<void>((resolve) => {
        // A write to a process that just died fails with EPIPE; the exit handler reports that death.
        stdin.write(`${JSON.stringify(message)}\n`, () => resolve());
      });
    },
  });
  stdin.on('error', () => undefined);
  return { stream: { readable, writable } };
}

/** The message, or a description of why the line is not one. */
function parseLine(line: string): Message | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return `a non-JSON line on stdout: ${quote(line)}`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `a stdout line that is not a JSON-RPC object: ${quote(line)}`;
  const message = value as Message;
  if (message.jsonrpc !== '2.0') return `a stdout line without jsonrpc "2.0": ${quote(line)}`;
  if (message.method !== undefined && typeof message.method !== 'string')
    return `a message whose method is not a string: ${quote(line)}`;
  if (message.method === undefined && !isId(message.id)) return `a response without a valid id: ${quote(line)}`;
  return message;
}

function isId(value: unknown): value is Id {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

function quote(line: string): string {
  return JSON.stringify(line.length > 120 ? `${line.slice(0, 120)}…` : line);
}
