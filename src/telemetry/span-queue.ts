/**
 * Span building waits until the events that arrived together have been answered: the parent's main
 * thread answers its drivers first (claims, tool results, the next request's go-ahead) and builds the
 * spans of the burst right after, from the same stamps (a span's times are the logged ones, not the
 * time it is built). What must see the spans now drains the queue first: a turn's end (its spans end
 * before `turn-end` is emitted and before its run() resolves) and the propagation of a turn's context.
 */
import type { SessionEvent } from '../types.js';
import type { AgentFacts } from './spans.js';

/** One logged batch, or a piece of parent-side work that must run in order with the batches. */
type Pending = { agent: AgentFacts; stamped: readonly SessionEvent[] } | (() => void);

export class SpanQueue {
  private pending: Pending[] = [];
  private scheduled: NodeJS.Immediate | undefined;

  constructor(
    private readonly build: (agent: AgentFacts, stamped: readonly SessionEvent[]) => void,
    /** A step threw (a tracer or exporter failed): reported, and the next step still runs. */
    private readonly failed: (error: unknown) => void,
  ) {}

  /** A logged batch: built now when it ends a turn, otherwise once the current burst is answered. */
  logged(agent: AgentFacts, stamped: readonly SessionEvent[]): void {
    this.pending.push({ agent, stamped });
    if (endsTurn(stamped)) this.drain();
    else this.schedule();
  }

  /** Work that reads the spans built so far (a child start reads its call's span): queued in order. */
  later(step: () => void): void {
    this.pending.push(step);
    this.schedule();
  }

  /** Builds everything queued, in arrival order. */
  drain(): void {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    // A step may queue more (a tracer that logs): the loop takes those too, still in order.
    for (let index = 0; index < this.pending.length; index++) {
      const next = this.pending[index] as Pending;
      try {
        if (typeof next === 'function') next();
        else this.build(next.agent, next.stamped);
      } catch (error) {
        this.failed(error);
      }
    }
    this.pending = [];
  }

  private schedule(): void {
    if (this.scheduled === undefined) this.scheduled = setImmediate(() => this.drain());
  }
}

function endsTurn(stamped: readonly SessionEvent[]): boolean {
  for (const event of stamped) if (event.type === 'turn/end') return true;
  return false;
}
