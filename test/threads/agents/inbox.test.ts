/** The inbox's take rules for reports (SPEC §16 "Reports"): nothing overtakes an older message of its own turn. */
import { describe, expect, it } from 'vitest';
import { Inbox, type QueuedMessage } from '../../../src/agents/inbox.js';
import type { MessageDelivery } from '../../../src/sessions/event-types.js';

function message(id: string, delivery?: MessageDelivery): QueuedMessage {
  return { id, text: id, durable: Promise.resolve(), signal: undefined, ...(delivery ? { delivery } : {}) };
}

function inboxOf(...messages: QueuedMessage[]): Inbox {
  const inbox = new Inbox();
  for (const queued of messages) inbox.push(queued);
  return inbox;
}

const ids = (messages: readonly QueuedMessage[]): string[] => messages.map((m) => m.id);

describe('Inbox', () => {
  it('quiet messages never start a turn: they ride with the next message that does, ahead of it', () => {
    const inbox = inboxOf(message('q1', 'quiet'), message('q2', 'quiet'));
    expect(inbox.claimable).toBe(false);
    expect(inbox.takeTurn()).toBeUndefined();
    inbox.push(message('user'));
    expect(inbox.claimable).toBe(true);
    const taken = inbox.takeTurn();
    expect(taken?.claimed.id).toBe('user');
    expect(ids(taken?.joined ?? [])).toEqual(['q1', 'q2']);
    expect(inbox.size).toBe(0);
    expect(inbox.claimable).toBe(false);
  });

  it('a next-step message can start a turn (an idle agent wakes for it)', () => {
    const inbox = inboxOf(message('q', 'quiet'), message('r', 'next-step'), message('user'));
    const taken = inbox.takeTurn();
    expect([taken?.claimed.id, ids(taken?.joined ?? [])]).toEqual(['r', ['q']]);
    expect(inbox.takeTurn()?.claimed.id).toBe('user');
  });

  it('reports that piled up while the agent was busy start one turn, not one each, and never pass a turn message', () => {
    const inbox = inboxOf(
      message('r1', 'next-step'),
      message('r2', 'next-step'),
      message('q', 'quiet'),
      message('r3', 'next-step'),
      message('user'),
      message('r4', 'next-step'),
    );
    const taken = inbox.takeTurn();
    // The last report claims the turn; the ones before it join it, in acceptance order.
    expect([taken?.claimed.id, ids(taken?.joined ?? [])]).toEqual(['r3', ['r1', 'r2', 'q']]);
    expect(inbox.takeTurn()?.claimed.id).toBe('user');
    expect(inbox.takeTurn()?.claimed.id).toBe('r4');
    expect(inbox.claimable).toBe(false);
  });

  it('a model step takes the reports at the front, up to the last next-step one, and never passes a turn message', () => {
    const inbox = inboxOf(
      message('q1', 'quiet'),
      message('r1', 'next-step'),
      message('q2', 'quiet'),
      message('user'),
      message('r2', 'next-step'),
    );
    expect(inbox.stepPending).toBe(true);
    expect(ids(inbox.takeStep())).toEqual(['q1', 'r1']);
    // q2 asks for no step, and r2 waits behind the user's message: a step takes nothing now.
    expect(ids(inbox.takeStep())).toEqual([]);
    expect(inbox.takeTurn()?.claimed.id).toBe('user');
    expect(ids(inbox.takeStep())).toEqual(['r2']);
    expect(inbox.stepPending).toBe(false);
  });

  it('keeps its count of quiet messages through unshift', () => {
    const inbox = inboxOf(message('q', 'quiet'), message('user'));
    const taken = inbox.takeTurn();
    inbox.unshift(taken?.joined ?? []);
    expect(inbox.size).toBe(1);
    expect(inbox.claimable).toBe(false);
  });
});
