/**
 * A driver's side of the proxied shape: its request's stream, read from the parent through the
 * gateway (ModelRequest.modelProxy) one batch of parts per crossing. An abort cancels the parent's
 * call at once, wherever the request was.
 */
import { BroodError } from '../../errors.js';
import { abortedError } from '../abort.js';
import type { CallFailure } from './call-failure.js';
import type { ProxyCall } from './proxy-server.js';
import type { StreamPart, StreamSource } from './request.js';

type Call = (call: ProxyCall) => Promise<unknown>;
type OpenAnswer = { id?: unknown; failure?: unknown; dropped?: unknown };

/** `notes` is told when the parent's model could not take an option (a reasoning effort before v4). */
export function proxiedSource(provider: string, model: string, call: Call | undefined, notes: string[]): StreamSource {
  return {
    open: async (options, signal) => {
      if (call === undefined)
        throw new BroodError(
          'INVALID_CONFIG',
          `AI SDK provider '${provider}' is proxied, but this runner has no way to the parent`,
        );
      const reply = (await call({ op: 'open', provider, model, options })) as OpenAnswer | undefined;
      if (typeof reply?.id !== 'string') throw failureOf(reply?.failure);
      if (typeof reply.dropped === 'string' && !notes.includes(reply.dropped)) notes.push(reply.dropped);
      const stream = new RemoteStream(reply.id, call);
      // Aborted while the parent opened it: nobody will read it.
      if (signal.aborted) {
        void stream.return();
        throw abortedError();
      }
      return stream;
    },
  };
}

/** The parent's parts in arrival order; `return` cancels the parent's call unless it already ended. */
class RemoteStream implements AsyncIterable<StreamPart>, AsyncIterator<StreamPart> {
  private buffered: StreamPart[] = [];
  private ended = false;

  constructor(
    private readonly id: string,
    private readonly call: Call,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<StreamPart> {
    return this;
  }

  async next(): Promise<IteratorResult<StreamPart>> {
    while (this.buffered.length === 0 && !this.ended) {
      const reply = (await this.call({ op: 'pull', id: this.id })) as { parts?: unknown; done?: unknown };
      if (!Array.isArray(reply?.parts) || typeof reply.done !== 'boolean')
        throw new BroodError('INTERNAL', 'malformed AI SDK proxy reply: expected { parts, done }');
      this.buffered.push(...(reply.parts.filter(isPart) as StreamPart[]));
      this.ended = reply.done;
    }
    const part = this.buffered.shift();
    return part === undefined ? { done: true, value: undefined } : { done: false, value: part };
  }

  async return(): Promise<IteratorResult<StreamPart>> {
    if (!this.ended) {
      this.ended = true;
      await this.call({ op: 'cancel', id: this.id }).catch(() => {});
    }
    return { done: true, value: undefined };
  }
}

function isPart(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** The parent's CallFailure (read again by callFailureOf), or a protocol fault when the reply had neither. */
function failureOf(raw: unknown): CallFailure | BroodError {
  if (typeof raw === 'object' && raw !== null && typeof (raw as { message?: unknown }).message === 'string')
    return raw as CallFailure;
  return new BroodError('INTERNAL', 'malformed AI SDK proxy reply: expected { id } or { failure }');
}
