/**
 * An agent's accepted-but-unclaimed messages, in acceptance order. A message is pushed the moment it
 * is accepted and becomes claimable once its `user/message` event is durable, so concurrent sends
 * keep their order and a turn never claims a message that a crash could lose.
 */
import type { TurnResult } from '../types.js';
import type { StructuredTurn } from './structured-turn.js';

export interface QueuedMessage {
  id: string;
  text: string;
  durable: Promise<void>;
  signal: AbortSignal | undefined;
  /** run(text, { outputSchema }): the turn that claims this message presents structured_output. */
  structured?: StructuredTurn;
}

interface Waiter {
  resolve(result: TurnResult): void;
  reject(error: unknown): void;
}

export class Inbox {
  private readonly queue: QueuedMessage[] = [];
  private readonly waiters = new Map<string, Waiter>();

  get size(): number {
    return this.queue.length;
  }

  push(message: QueuedMessage): void {
    this.queue.push(message);
  }

  shift(): QueuedMessage | undefined {
    return this.queue.shift();
  }

  has(id: string): boolean {
    return this.queue.some((message) => message.id === id);
  }

  /** Resolves with the result of the turn that claims message `id`. */
  result(id: string): Promise<TurnResult> {
    return new Promise((resolve, reject) => this.waiters.set(id, { resolve, reject }));
  }

  settle(id: string, result: TurnResult): void {
    this.waiters.get(id)?.resolve(result);
    this.waiters.delete(id);
  }

  fail(id: string, error: unknown): void {
    this.waiters.get(id)?.reject(error);
    this.waiters.delete(id);
  }

  /** Settles every waiter whose message will not run in this agent's lifetime (dispose). */
  settleQueued(result: TurnResult): void {
    for (const message of this.queue) this.settle(message.id, result);
  }
}
