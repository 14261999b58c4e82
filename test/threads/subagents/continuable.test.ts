/** SPEC §9 continuable children and §11.7 (runtime side): notices, followup, interrupt, authority, cold resume. */
import { appendFile, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent, SessionEvent } from '../../../src/index.js';
import { defineTool, fileSessions, scriptedModels } from '../../../src/index.js';
import { REPORT_GUIDANCE } from '../../../src/subagents/report.js';
import { expectCode } from '../../support/codes.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { closeAfterEach, type Harness, harness, isNotice, nth, type Script, startChild } from './helpers.js';

const { open, dirs } = closeAfterEach();

const SCRIPTS: Script[] = [
  {
    match: 'parent',
    turns: [{ text: 'parent idle' }, { text: 'parent woken' }, { text: 'parent woken 2' }, { text: 'parent woken 3' }],
  },
  {
    match: 'cont task',
    turns: [{ text: 'child first' }, { text: 'child second' }, { text: 'child third' }, { text: 'child fourth' }],
  },
  { match: 'cont slow', latencyMs: 60_000, turns: [{ text: 'never' }] },
  { match: 'one shot', turns: [{ text: 'one-shot done' }] },
];

async function setup(): Promise<{ h: Harness; parent: Agent }> {
  const h = harness({ scripts: SCRIPTS });
  open.push(h);
  const parent = await h.brood.createAgent({ model: route });
  await parent.run('parent hello');
  return { h, parent };
}

const noticeText = (event: SessionEvent): string => String(event.data.text);
const startCont = (h: Harness, parent: Agent, prompt: string, extra: Record<string, unknown> = {}) =>
  h.brood.subagents.startContinuable({
    provider: 'spawn',
    label: 'worker',
    signal: new AbortController().signal,
    request: { parent, prompt, ...extra },
  });

describe('continuable children', () => {
  it('startContinuable: accepted message durable on return; one settlement notice wakes the idle parent', async () => {
    const { h, parent } = await setup();
    const { childId, messageId } = await startCont(h, parent, 'cont task');
    // Durable before resolve: the prompt is in the store already.
    const accepted = ofType((await h.brood.sessions.read(childId)).events, 'user/message');
    expect(accepted.map((e) => [e.data.id, e.data.text])).toEqual([[messageId, 'cont task']]);
    const header = (await h.headers()).find((x) => x.id === childId);
    expect(header).toMatchObject({ parentSession: parent.id, origin: 'subagent', delegationDepth: 1 });

    const notice = await nth(h, parent.id, 'user/message', 1, isNotice);
    expect(noticeText(notice)).toBe(
      `Background subagent ${childId} finished and will do no further work unless you send it more.\nIts closing message:\nchild first`,
    );
    // The idle parent was woken and its script answered.
    const woken = await h.tap.waitFor(parent.id, 'turn/end', (e) => e.data.turn === 2);
    expect(woken.data.reason).toBe('completed');
    const parentEvents = await h.events(parent.id);
    expect(ofType(parentEvents, 'assistant/message').at(-1)?.data.text).toBe('parent woken');
    expect(ofType(parentEvents, 'turn/start').at(-1)?.data.messageIds).toEqual([notice.data.id]);
    expect(ofType(parentEvents, 'user/message').filter(isNotice)).toHaveLength(1);
    expect(h.starts).toMatchObject([{ id: childId, parentId: parent.id, depth: 1, provider: 'spawn' }]);
    expect(h.ends).toMatchObject([
      { id: childId, stopReason: 'completed', output: 'child first', runId: h.starts[0]!.runId },
    ]);
    const descriptor = ofType(await h.events(childId), 'subagent/descriptor')[0];
    expect(descriptor?.data).toMatchObject({ provider: 'spawn', mode: 'continuable', label: 'worker' });
  });

  it('followup queues later turns in the same child session; each activation is its own run with one notice', async () => {
    const { h, parent } = await setup();
    const { childId } = await startCont(h, parent, 'cont task');
    await nth(h, parent.id, 'user/message', 1, isNotice);
    const a = await h.brood.subagents.followup(parent, childId, 'more one', { signal: new AbortController().signal });
    const b = await h.brood.subagents.followup(parent, childId, 'more two', { signal: new AbortController().signal });
    const childMessages = ofType(await h.events(childId), 'user/message');
    expect(childMessages.slice(1).map((e) => [e.data.id, e.data.text])).toEqual([
      [a, 'more one'],
      [b, 'more two'],
    ]);
    await h.tap.waitFor(childId, 'turn/end', (e) => e.data.turn === 3);
    const childEvents = await h.events(childId);
    expect(ofType(childEvents, 'turn/start').map((e) => e.data.messageIds)).toEqual([
      [childMessages[0]!.data.id],
      [a],
      [b],
    ]);
    expect(ofType(childEvents, 'assistant/message').map((e) => e.data.text)).toEqual([
      'child first',
      'child second',
      'child third',
    ]);
    // One session, every activation its own runId; one notice per activation, each after its end.
    expect(new Set((await h.headers()).map((x) => x.id))).toEqual(new Set([parent.id, childId]));
    await nth(h, parent.id, 'user/message', h.starts.length, isNotice);
    const c = await h.brood.subagents.followup(parent, childId, 'more three', { signal: new AbortController().signal });
    const last = await nth(h, parent.id, 'user/message', h.starts.length, isNotice);
    expect(noticeText(last)).toBe(
      `Background subagent ${childId} finished and will do no further work unless you send it more.\nIts closing message:\nchild fourth`,
    );
    expect(ofType(await h.events(childId), 'turn/start').at(-1)?.data.messageIds).toEqual([c]);
    expect(h.starts.length).toBeGreaterThanOrEqual(3);
    expect(h.ends).toHaveLength(h.starts.length);
    expect(new Set(h.starts.map((s) => s.runId)).size).toBe(h.starts.length);
    expect(h.ends.map((e) => e.runId)).toEqual(h.starts.map((s) => s.runId));
    expect(ofType(await h.events(parent.id), 'user/message').filter(isNotice)).toHaveLength(h.starts.length);
  });

  it('authority: another agent → UNAUTHORIZED; unknown or one-shot children → NOT_RESUMABLE', async () => {
    const { h, parent } = await setup();
    const other = await h.brood.createAgent({ model: route });
    const { childId } = await startCont(h, parent, 'cont task');
    await nth(h, parent.id, 'user/message', 1, isNotice);
    const signal = new AbortController().signal;
    await expectCode(h.brood.subagents.followup(other, childId, 'hi', { signal }), 'UNAUTHORIZED');
    expectCode(() => h.brood.subagents.interrupt(childId, other), 'UNAUTHORIZED');
    await expectCode(h.brood.subagents.followup(parent, 'sub_nope', 'hi', { signal }), 'NOT_RESUMABLE');
    expectCode(() => h.brood.subagents.interrupt('sub_nope', parent), 'NOT_RESUMABLE');
    await expectCode(h.brood.subagents.followup(parent, other.id, 'hi', { signal }), 'NOT_RESUMABLE');
    const oneShot = await startChild(h, parent, 'one shot');
    await oneShot.result;
    await expectCode(h.brood.subagents.followup(parent, oneShot.id, 'hi', { signal }), 'NOT_RESUMABLE');
    expectCode(() => h.brood.subagents.interrupt(oneShot.id, parent), 'NOT_RESUMABLE');
    await oneShot.dispose();
    // Released one-shot child: still not resumable (its stored descriptor says one-shot).
    await expectCode(h.brood.subagents.followup(parent, oneShot.id, 'hi', { signal }), 'NOT_RESUMABLE');
    // A grandparent is not the direct parent either: nothing was accepted by the rejected calls.
    expect(ofType(await h.events(childId), 'user/message')).toHaveLength(1);
  });

  it('interrupt by the parent aborts the running turn; the notice says it was stopped', async () => {
    const { h, parent } = await setup();
    const { childId } = await startCont(h, parent, 'cont slow');
    await h.tap.waitFor(childId, 'model/request');
    h.brood.subagents.interrupt(childId, parent);
    const notice = await nth(h, parent.id, 'user/message', 1, isNotice);
    expect(noticeText(notice).startsWith(`Background subagent ${childId} was stopped before it finished.\n`)).toBe(
      true,
    );
    expect((await h.endOf(childId)).stopReason).toBe('aborted');
    expect(ofType(await h.events(childId), 'turn/end').map((e) => e.data.reason)).toEqual(['aborted']);
  });

  it('cold resume: same depth, persona, filter and route; an accepted-but-unprocessed message runs exactly once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brood-cont-'));
    dirs.push(dir);
    const build = () => {
      const h = harness({
        inner: fileSessions(dir),
        persona: 'DEPLOY',
        models: [
          scriptedModels({
            id: 'scripted',
            models: ['scripted', { id: 'm2', efforts: ['low', 'high'], defaultEffort: 'low' }],
            scripts: [
              {
                match: 'parent',
                turns: [{ text: 'p1' }, { text: 'p2' }, { text: 'p3' }, { text: 'p4' }, { text: 'p5' }],
              },
              {
                match: 'cont task',
                turns: [
                  { text: 'first' },
                  { toolCalls: [{ name: 'visible', arguments: {} }] },
                  { text: 'second {{results}}' },
                  { text: 'third' },
                ],
              },
            ],
          }),
        ],
      });
      const runs: string[] = [];
      for (const name of ['visible', 'hidden']) {
        h.brood.tools.register(
          defineTool({
            name,
            description: name,
            parameters: { type: 'object', properties: {} },
            execute: () => {
              runs.push(name);
              return `${name} ran`;
            },
          }),
        );
      }
      return { h, runs };
    };
    const first = build();
    const parent = await first.h.brood.createAgent({ model: route, depth: 2 });
    await parent.run('parent hello');
    const { childId } = await startCont(first.h, parent, 'cont task', {
      persona: 'CHILD PERSONA depth {{depth}}',
      toolFilter: { allow: ['visible'] },
      agentOptions: { model: 'm2', reasoningEffort: 'high' },
    });
    await nth(first.h, parent.id, 'user/message', 1, isNotice);
    await first.h.tap.waitFor(parent.id, 'turn/end', (e) => e.data.turn === 2);
    const firstRequest = (await first.h.tap.waitFor(childId, 'model/request')).data;
    await first.h.brood.close();

    // A message accepted (durable) by the child but never claimed by a turn, as a crash would leave it.
    const file = join(dir, `${childId}.jsonl`);
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const lastSeq = (JSON.parse(lines.at(-1)!) as SessionEvent).seq;
    await appendFile(
      file,
      `${JSON.stringify({
        seq: lastSeq + 1,
        time: Date.now(),
        type: 'user/message',
        data: { id: 'msg_pending', text: 'pending work', source: 'parent' },
      })}\n`,
    );

    const second = build();
    open.push(second.h);
    const resumed = await second.h.brood.resumeAgent(parent.id);
    expect(resumed.depth).toBe(2);
    const followId = await second.h.brood.subagents.followup(resumed, childId, 'after restart', {
      signal: new AbortController().signal,
    });
    await second.h.tap.waitFor(childId, 'turn/end', (e) => e.data.turn === 3);
    const { header, events } = await second.h.brood.sessions.read(childId);
    expect(header.delegationDepth).toBe(3);
    const turnStarts = ofType(events, 'turn/start').map((e) => e.data.messageIds);
    expect(turnStarts.slice(1)).toEqual([['msg_pending'], [followId]]);
    expect(turnStarts.flat().filter((id) => id === 'msg_pending')).toHaveLength(1);
    const requests = ofType(events, 'model/request').map((e) => e.data);
    expect(requests.length).toBeGreaterThanOrEqual(4);
    for (const request of requests) {
      expect(request).toMatchObject({
        provider: 'scripted',
        model: 'm2',
        reasoningEffort: 'high',
        // A continuable child also has `report` and its guidance, whatever its filter says.
        system: `CHILD PERSONA depth 3\n\n${REPORT_GUIDANCE}`,
        tools: ['report', 'visible'],
      });
    }
    expect(firstRequest).toMatchObject({
      system: `CHILD PERSONA depth 3\n\n${REPORT_GUIDANCE}`,
      tools: ['report', 'visible'],
      model: 'm2',
    });
    expect(second.runs).toEqual(['visible']);
    expect(ofType(events, 'assistant/message').map((e) => e.data.text)).toEqual([
      'first',
      '',
      'second visible ran',
      'third',
    ]);
    // The resumed child settles back to its resumed parent.
    const notice = await nth(
      second.h,
      parent.id,
      'user/message',
      1,
      (e) => isNotice(e) && String(e.data.text).includes('third'),
    );
    expect(noticeText(notice).startsWith(`Background subagent ${childId} finished`)).toBe(true);
    // A child of a resumed parent cannot be driven by a stranger either.
    const stranger = await second.h.brood.createAgent({ model: route });
    await expectCode(
      second.h.brood.subagents.followup(stranger, childId, 'x', { signal: new AbortController().signal }),
      'UNAUTHORIZED',
    );
  });
});
