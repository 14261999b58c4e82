import { describe, expect, it } from 'vitest';
import { createBrood, defineTool, memorySessions, type SessionEvent } from '../../../src/index.js';
import { isEventOf, knownEvent, parsedToolArguments, type SessionEventOf } from '../../../src/sessions/event-types.js';
import { scriptedModels } from '../../../src/testing.js';
import { route } from '../../support/route.js';

const logged = (type: string, data: Record<string, unknown>): SessionEvent => ({ seq: 0, time: 1, type, data });

describe('session event types', () => {
  it('types a known event by its type and leaves an unknown one out', () => {
    const start = knownEvent(logged('turn/start', { turn: 3, messageIds: ['m1'] }));
    expect(start?.type === 'turn/start' && start.data.turn).toBe(3);
    expect(knownEvent(logged('host/custom', { any: 1 }))).toBeUndefined();
    // Names inherited from Object.prototype are not event types.
    expect(knownEvent(logged('constructor', {}))).toBeUndefined();
  });

  it('isEventOf narrows one type', () => {
    const events = [logged('user/message', { id: 'm1', text: 'hi', source: 'user' }), logged('turn/end', { turn: 1 })];
    const ends: SessionEventOf<'turn/end'>[] = events.filter((event) => isEventOf(event, 'turn/end'));
    expect(ends.map((event) => event.data.turn)).toEqual([1]);
  });

  it('tool arguments parse as JSON, or stay the raw text', () => {
    expect(parsedToolArguments('{"a":1}')).toEqual({ a: 1 });
    expect(parsedToolArguments('{not json')).toBe('{not json');
  });

  it('every event type a real run logs is a known type', async () => {
    const sessions = memorySessions();
    const brood = createBrood({
      sessions,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'go', turns: [{ toolCalls: [{ name: 'echo', arguments: { x: 1 } }] }, { text: 'done' }] }],
        }),
      ],
      runner: 'inline',
    });
    try {
      brood.tools.register(
        defineTool({ name: 'echo', description: 'echo', parameters: { type: 'object' }, execute: () => 'ok' }),
      );
      const agent = await brood.createAgent({ model: route });
      await agent.run('go');
      const { events } = await sessions.read(agent.id);
      expect(events.filter((event) => knownEvent(event) === undefined)).toEqual([]);
      expect(new Set(events.map((event) => event.type))).toEqual(
        new Set([
          'agent/descriptor',
          'user/message',
          'turn/start',
          'model/request',
          'assistant/message',
          'tool/call',
          'tool/result',
          'turn/end',
        ]),
      );
    } finally {
      await brood.close();
    }
  });
});
