/**
 * What agent.stream() returns: one turn's events, readable once — as BroodEvents, as UI message
 * chunks, as a web Response or piped onto a Node response — and the turn's result, which settles
 * whether or not anything reads the events.
 */
import type { ServerResponse } from 'node:http';
import { BroodError, errorMessage } from '../../errors.js';
import type { EventStream } from '../../events/stream.js';
import type { AgentStream, BroodEvent, TurnResult, UIMessageChunk, UIMessageStreamResponseInit } from '../../types.js';
import { pipeToResponse, uiMessageResponse } from './sse.js';
import { UIMessageChunks } from './ui-message-chunks.js';

export class RunStream<S = unknown> implements AgentStream<S> {
  readonly result: Promise<TurnResult<S>>;
  /** How the events were read, once they were. */
  private readAs: string | undefined;

  constructor(
    private readonly agentId: string,
    private readonly events: EventStream,
    result: Promise<TurnResult>,
  ) {
    this.result = result as Promise<TurnResult<S>>;
    // Reading only the events (or only the result) must not leave a rejection unhandled.
    this.result.catch(() => undefined);
  }

  [Symbol.asyncIterator](): AsyncIterator<BroodEvent> {
    this.consume('iterated');
    return this.iterator();
  }

  toUIMessageStream(): ReadableStream<UIMessageChunk> {
    this.consume('read as a UI message stream');
    return this.chunks();
  }

  toUIMessageStreamResponse(init?: UIMessageStreamResponseInit): Response {
    this.consume('read as a UI message stream');
    return uiMessageResponse(this.chunks(), init);
  }

  pipeUIMessageStreamToResponse(response: ServerResponse, init?: UIMessageStreamResponseInit): Promise<void> {
    this.consume('read as a UI message stream');
    return pipeToResponse(this.chunks(), response, init);
  }

  /** The events are read once: a second reader would see what the first left. */
  private consume(how: string): void {
    if (this.readAs !== undefined)
      throw new BroodError('INVALID_ARGS', `a stream is read once: this one was already ${this.readAs}`);
    this.readAs = how;
  }

  /** The events; once they end, a run that failed (it never started a turn) throws its error. */
  private iterator(): AsyncIterator<BroodEvent> {
    const { events, result } = this;
    return {
      async next(): Promise<IteratorResult<BroodEvent>> {
        const step = await events.next();
        if (step.done) await result;
        return step;
      },
      return: () => this.events.return(),
    };
  }

  private chunks(): ReadableStream<UIMessageChunk> {
    const translate = new UIMessageChunks(this.agentId);
    const { events, result } = this;
    return new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const chunk of translate.start()) controller.enqueue(chunk);
      },
      async pull(controller) {
        // One event may translate to no chunk: read until something is enqueued or the turn ended.
        for (;;) {
          const step = await events.next();
          if (step.done) break;
          const chunks = translate.event(step.value);
          for (const chunk of chunks) controller.enqueue(chunk);
          if (chunks.length > 0) return;
        }
        const outcome = await result.then(
          (settled) => ({ result: settled }),
          (error: unknown) => ({ error: errorMessage(error) }),
        );
        for (const chunk of translate.finish(outcome)) controller.enqueue(chunk);
        controller.close();
      },
      cancel() {
        void events.return();
      },
    });
  }
}
