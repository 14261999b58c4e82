/**
 * SPEC §6 with a real fileSessions directory: runs survive the runtime, accepted messages survive a
 * crash (each unclaimed one runs exactly once, in order; an interrupted turn is closed, never re-run),
 * and resume restores depth from the header without ever lowering it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood, SessionEvent } from '../../../src/index.js';
import { defineTool, fileSessions, scriptedModels } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let dir: string;
const open: Brood[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brood-agents-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((b) => b.close()));
  await rm(dir, { recursive: true, force: true });
});

const models = [
  scriptedModels({
    id: 'scripted',
    scripts: [
      { match: 'remember', turns: [{ text: 'first reply' }, { text: 'second reply' }] },
      // The crashed agent: turn 1 asked for `mark` and died before the result; later messages each mark once.
      {
        match: 'crash',
        turns: [
          { toolCalls: [{ name: 'mark', arguments: {} }] },
          { toolCalls: [{ name: 'mark', arguments: {} }] },
          { text: 'after two' },
          { toolCalls: [{ name: 'mark', arguments: {} }] },
          { text: 'after three' },
        ],
      },
    ],
  }),
];

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  function runtime(): Brood {
    const brood = makeBrood(runner, { sessions: fileSessions(dir), models });
    open.push(brood);
    return brood;
  }

  it('a run is readable after close() by a new runtime, and resumeAgent continues the conversation', async () => {
    const first = runtime();
    const agent = await first.createAgent({ model: route });
    expect(await agent.run('remember this')).toMatchObject({ stopReason: 'completed', output: 'first reply' });
    await first.close();
    await expectCode(agent.send('after close'), 'DISPOSED');

    const second = runtime();
    expect((await second.sessions.list()).map((h) => h.id)).toEqual([agent.id]);
    const { header, events } = await second.sessions.read(agent.id);
    expect(header).toMatchObject({ id: agent.id, delegationDepth: 0, model: route });
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual(['completed']);
    expect(ofType(events, 'assistant/message').map((e) => e.data.text)).toEqual(['first reply']);

    const resumed = await second.resumeAgent(agent.id);
    expect(resumed.id).toBe(agent.id);
    // The script position comes from the restored history: the second reply, not the first again.
    expect(await resumed.run('and more')).toMatchObject({ stopReason: 'completed', output: 'second reply' });
    const after = (await second.sessions.read(agent.id)).events;
    expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => i));
    expect(ofType(after, 'turn/start').map((e) => e.data.turn)).toEqual([1, 2]);
  });

  it('after a crash, resume continues the interrupted turn and runs every unclaimed message exactly once, in order', async () => {
    const id = 'crashed-agent';
    const crashed = fileSessions(dir);
    await crashed.create({ id, createdAt: Date.now(), delegationDepth: 2, model: route });
    const ev = (type: string, data: Record<string, unknown>): Omit<SessionEvent, 'seq'> => ({
      time: Date.now(),
      type,
      data,
    });
    const written = [
      ev('agent/descriptor', { model: route, codeMode: 'native' }),
      ev('user/message', { id: 'm1', text: 'crash test one', source: 'user' }),
      ev('turn/start', { turn: 1, messageIds: ['m1'] }),
      ev('model/request', { provider: 'scripted', model: 'scripted', system: '', tools: ['mark'], threadId: 1 }),
      ev('assistant/message', {
        text: '',
        toolCalls: [{ callId: 'call_0_0', name: 'mark', arguments: '{}' }],
        finish: 'tool-calls',
      }),
      ev('tool/call', { callId: 'call_0_0', name: 'mark', arguments: '{}' }),
      // crash here: m1's turn never ended; m2 and m3 were accepted but never claimed
      ev('user/message', { id: 'm2', text: 'two', source: 'user' }),
      ev('user/message', { id: 'm3', text: 'three', source: 'user' }),
    ].map((event, seq) => ({ seq, ...event }));
    await crashed.append(id, written);
    await crashed.flush(id);
    await crashed.close();

    const brood = runtime();
    const marks: string[] = [];
    brood.tools.register(
      defineTool({
        name: 'mark',
        description: 'a side effect that must not repeat',
        parameters: z.object({}),
        execute: (_args, ctx) => {
          marks.push(ctx.callId);
          return `mark ${marks.length}`;
        },
      }),
    );
    const agent = await brood.resumeAgent(id, { depth: 1 });
    expect(agent.depth).toBe(2); // from the header; the lower requested depth is ignored
    await agent.whenIdle();

    const events = (await brood.sessions.read(id)).events;
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(ofType(events, 'turn/start').map((e) => e.data)).toEqual([
      { turn: 1, messageIds: ['m1'] },
      { turn: 2, messageIds: ['m2'] },
      { turn: 3, messageIds: ['m3'] },
    ]);
    expect(ofType(events, 'turn/end').map((e) => e.data)).toEqual([
      { turn: 1, reason: 'completed' },
      { turn: 2, reason: 'completed' },
      { turn: 3, reason: 'completed' },
    ]);
    // The interrupted call_0_0 (its outcome unknown, `mark` not idempotent) was not run again: the model
    // was told, and turn 1 went on from its log (its answered request was not sent again).
    const unknown = ofType(events, 'tool/result').find((e) => e.data.callId === 'call_0_0');
    expect(unknown?.data).toMatchObject({ isError: true, content: expect.stringContaining('TOOL_OUTCOME_UNKNOWN') });
    expect(marks).toEqual(['call_1_0', 'call_3_0']);
    expect(
      ofType(events, 'assistant/message')
        .map((e) => e.data.text)
        .filter(Boolean)
        .slice(0, 2),
    ).toEqual(['after two', 'after three']);
    expect(ofType(events, 'user/message')).toHaveLength(3); // nothing re-accepted

    // Resuming again (a new runtime) finds nothing left to run.
    await brood.close();
    const again = runtime();
    const reopened = await again.resumeAgent(id);
    await reopened.whenIdle();
    expect((await again.sessions.read(id)).events).toHaveLength(events.length);
    expect(marks).toHaveLength(2);
  });

  it('resume restores depth from the header and never lowers it', async () => {
    const first = runtime();
    const deep = await first.createAgent({ model: route, depth: 3, persona: 'depth {{depth}}' });
    expect(deep.depth).toBe(3);
    await deep.run('remember depth');
    await first.close();

    const second = runtime();
    expect((await second.sessions.read(deep.id)).header.delegationDepth).toBe(3);
    const lowered = await second.resumeAgent(deep.id, { depth: 0 });
    expect(lowered.depth).toBe(3);
    await lowered.run('remember again');
    const systems = ofType((await second.sessions.read(deep.id)).events, 'model/request').map((e) => e.data.system);
    expect(systems).toEqual(['depth 3', 'depth 3']); // the persona was restored from the descriptor too
    await second.close();

    const third = runtime();
    const raised = await third.resumeAgent(deep.id, { depth: 5 });
    expect(raised.depth).toBe(5);
    await expectCode(third.resumeAgent('no-such-agent'), 'NOT_RESUMABLE');
  });
});
