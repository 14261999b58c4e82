/**
 * An agent's accepted-but-unclaimed messages, in acceptance order. A message is pushed the moment it
 * is accepted and becomes claimable once its `user/message` event is durable, so concurrent sends
 * keep their order and a turn never claims a message that a crash could lose.
 *
 * Most messages are each a turn of their own. A child's report is delivered differently (SPEC §16
 * "Reports"): `next-step` may also be taken by a running turn at its next model step, `quiet` never
 * starts a turn and rides with the next one. Messages are always taken from the front, so whatever
 * takes them keeps acceptance order.
 */
import { type MessagePart, partsField } from '../models/content-parts.js';
import type { MessageDelivery } from '../sessions/event-types.js';
import type { TurnResult } from '../types.js';
import type { StructuredTurn } from './structured-turn.js';

export interface QueuedMessage {
  id: string;
  text: string;
  /** The message's content parts when it has media (`text` is its text parts joined). */
  parts?: MessagePart[];
  durable: Promise<void>;
  signal: AbortSignal | undefined;
  /** run(text, { outputSchema }): the turn that claims this message presents structured_output. */
  structured?: StructuredTurn;
  /** Absent: the message is a turn of its own. */
  delivery?: MessageDelivery;
  /** The per-request context the claiming turn's tools read (held in memory only, never written). */
  context?: unknown;
}

/** A message a restored session had accepted and no turn took: durable already (it is in the log). */
export function restoredMessage(message: {
  id: string;
  text: string;
  parts?: MessagePart[] | undefined;
  delivery?: MessageDelivery | undefined;
  context?: unknown;
  structured?: StructuredTurn;
}): QueuedMessage {
  const { id, text, delivery, context, structured } = message;
  const queued: QueuedMessage = {
    id,
    text,
    ...partsField(message.parts),
    durable: Promise.resolve(),
    signal: undefined,
  };
  if (delivery) queued.delivery = delivery;
  if (context !== undefined) queued.context = context;
  if (structured !== undefined) queued.structured = structured;
  return queued;
}

/** What a new turn takes: the message it claims and the quiet messages queued ahead of it. */
export interface TurnTake {
  claimed: QueuedMessage;
  joined: QueuedMessage[];
}

interface Waiter {
  resolve(result: TurnResult): void;
  reject(error: unknown): void;
}

export class Inbox {
  private readonly queue: QueuedMessage[] = [];
  /** Made by the first waiter and dropped when the last is answered: a parked agent keeps none. */
  private waiters: Map<string, Waiter> | undefined;
  private quietCount = 0;

  get size(): number {
    return this.queue.length;
  }

  /** True while some queued message can start a turn (quiet ones wait for one). */
  get claimable(): boolean {
    return this.queue.length > this.quietCount;
  }

  push(message: QueuedMessage): void {
    this.queue.push(message);
    if (message.delivery === 'quiet') this.quietCount += 1;
  }

  /** Puts messages taken but not used back at the front, in their order. */
  unshift(messages: readonly QueuedMessage[]): void {
    this.queue.unshift(...messages);
    for (const message of messages) if (message.delivery === 'quiet') this.quietCount += 1;
  }

  /**
   * The first message that can start a turn, with the quiet ones before it; undefined when none can.
   * When that message is a report, the reports waiting right behind it come too (up to the last
   * `next-step` one): reports that piled up while the agent was busy are one turn, not one each.
   */
  takeTurn(): TurnTake | undefined {
    const index = this.queue.findIndex((message) => message.delivery !== 'quiet');
    if (index < 0) return undefined;
    const end = this.queue[index]?.delivery === 'next-step' ? this.lastStepReportFrom(index) : index;
    const taken = this.queue.splice(0, end + 1);
    for (const message of taken) if (message.delivery === 'quiet') this.quietCount -= 1;
    return { claimed: taken[end] as QueuedMessage, joined: taken.slice(0, end) };
  }

  /** The last `next-step` report of the run of reports that starts at `index`. */
  private lastStepReportFrom(index: number): number {
    let last = index;
    for (let next = index + 1; next < this.queue.length; next += 1) {
      const delivery = this.queue[next]?.delivery;
      if (delivery === undefined) break;
      if (delivery === 'next-step') last = next;
    }
    return last;
  }

  /**
   * What a running turn takes at a model step: the reports at the front of the queue, up to the last
   * `next-step` one among them (nothing when none of them asks for the next step). A message that is
   * a turn of its own stops the take, so nothing overtakes it.
   */
  takeStep(): QueuedMessage[] {
    let end = 0;
    for (let index = 0; index < this.queue.length; index += 1) {
      const delivery = this.queue[index]?.delivery;
      if (delivery === undefined) break;
      if (delivery === 'next-step') end = index + 1;
    }
    const taken = this.queue.splice(0, end);
    for (const message of taken) if (message.delivery === 'quiet') this.quietCount -= 1;
    return taken;
  }

  /** True while a `next-step` message waits (a new turn may take it at its first step). */
  get stepPending(): boolean {
    return this.queue.some((message) => message.delivery === 'next-step');
  }

  has(id: string): boolean {
    return this.queue.some((message) => message.id === id);
  }

  /** Resolves with the result of the turn that claims message `id`. */
  result(id: string): Promise<TurnResult> {
    this.waiters ??= new Map();
    const waiters = this.waiters;
    return new Promise((resolve, reject) => waiters.set(id, { resolve, reject }));
  }

  settle(id: string, result: TurnResult): void {
    this.takeWaiter(id)?.resolve(result);
  }

  fail(id: string, error: unknown): void {
    this.takeWaiter(id)?.reject(error);
  }

  private takeWaiter(id: string): Waiter | undefined {
    const waiter = this.waiters?.get(id);
    this.waiters?.delete(id);
    if (this.waiters?.size === 0) this.waiters = undefined;
    return waiter;
  }

  /**
   * Refuses every message that could start a turn (their run() rejects with `error`): no turn of
   * this agent can be admitted (QUEUE_FULL). Quiet reports stay for a later turn.
   */
  refuseClaimable(error: unknown): void {
    const refused = this.queue.filter((message) => message.delivery !== 'quiet');
    const kept = this.queue.filter((message) => message.delivery === 'quiet');
    this.queue.splice(0, this.queue.length, ...kept);
    this.quietCount = kept.length;
    for (const message of refused) this.fail(message.id, error);
  }

  /** Settles every waiter whose message will not run in this agent's lifetime (dispose). */
  settleQueued(result: TurnResult): void {
    for (const message of this.queue) this.settle(message.id, result);
  }
}
