/**
 * Crash resume of background work (docs/sessions.md "Crash resume"): a continuable child interrupted
 * after its parent's call had answered is woken by `brood.recover()` and its settlement notice reaches
 * the parent once; a background job's child interrupted while the parent's call had no result yet is
 * resumed as a new job the model now learns of, and one whose id the parent was already told is
 * resumed under that id; either way its notice is delivered once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, SessionEvent, SessionStore } from '../../../src/index.js';
import { createBrood, defineTool, memorySessions, scriptedModels, subagentTool } from '../../../src/index.js';
import { deferred } from '../../support/deferred.js';
import { ofType } from '../../support/events.js';
import { subagentCall } from '../../support/fan-out.js';
import { route } from '../../support/route.js';
import { copyOf } from '../../support/store-copy.js';
import { until } from '../../support/until.js';

const open: Brood[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((brood) => brood.close()));
});

const scripts = [
  {
    match: 'spawn',
    turns: [{ toolCalls: [subagentCall('child: work', 'worker', { run_in_background: true })] }, { text: 'spawned' }],
  },
  { match: 'child: work', turns: [{ toolCalls: [{ name: 'upsert', arguments: {} }] }, { text: 'child finished' }] },
];

function runtime(sessions: SessionStore, backgroundMode: 'one-shot' | 'continuable', hold?: () => Promise<never>) {
  const brood = createBrood({ runner: 'inline', sessions, models: [scriptedModels({ id: 'scripted', scripts })] });
  open.push(brood);
  brood.use(subagentTool({ provider: 'spawn', enableRunInBackground: true, backgroundMode }));
  brood.tools.register(
    defineTool({
      name: 'upsert',
      description: 'writes a row',
      parameters: { type: 'object', properties: {} },
      idempotent: true,
      execute: () => (hold ? hold() : 'upserted'),
    }),
  );
  return brood;
}

it('a continuable child interrupted after its parent was answered resumes, and its notice reaches the parent once', async () => {
  const before = memorySessions();
  const inBody = deferred();
  const first = runtime(before, 'continuable', () => {
    inBody.resolve();
    return new Promise<never>(() => undefined);
  });
  const root = await first.createAgent({ model: route });
  await expect(root.run('spawn')).resolves.toMatchObject({ output: 'spawned' });
  await inBody.promise;
  const store = await copyOf(before);
  const second = runtime(store, 'continuable');
  await expect(second.recover()).resolves.toEqual([]);
  const [child] = (await store.list()).filter((header) => header.parentSession === root.id);
  const notices = async () =>
    ofType((await store.read(root.id)).events, 'user/message').filter((e) => e.data.source === 'subagent-settled');
  await until(async () => (await notices()).length > 0 && (await second.resumeAgent(root.id)).status === 'idle');
  const childLog = (await store.read(child?.id ?? '')).events;
  expect(ofType(childLog, 'turn/end').map((e) => e.data.reason)).toEqual(['completed']);
  expect((await notices()).map((e) => e.data.text)).toEqual([expect.stringContaining('child finished')]);
  expect(ofType((await store.read(root.id)).events, 'turn/end')).toHaveLength(2);
});

it('a background job’s child interrupted before its parent’s call was answered becomes a job the model learns of', async () => {
  const before = memorySessions();
  const inBody = deferred();
  const first = runtime(before, 'one-shot', () => {
    inBody.resolve();
    return new Promise<never>(() => undefined);
  });
  const root = await first.createAgent({ model: route });
  void root.run('spawn').catch(() => undefined);
  await inBody.promise;
  // What a kill between the child's start and the parent's result leaves: the call has no result.
  const store = await copyOf(before, (id, events) =>
    id === root.id ? events.slice(0, events.findIndex((event) => event.type === 'tool/call') + 1) : events,
  );
  const rootLog = (await store.read(root.id)).events;
  expect(ofType(rootLog, 'turn/end')).toHaveLength(0);
  const second = runtime(store, 'one-shot');
  const [entry] = await second.recover();
  await expect(entry?.result).resolves.toMatchObject({ stopReason: 'completed', output: 'spawned' });
  const answer = ofType((await store.read(root.id)).events, 'tool/result')[0];
  expect(answer?.data.content).toMatch(/^started background subagent job job_\d+$/);
  const children = (await store.list()).filter((header) => header.parentSession === root.id);
  expect(children).toHaveLength(1);
  const notices = async () =>
    ofType((await store.read(root.id)).events, 'user/message').filter((e) => e.data.source === 'job-completed');
  await until(async () => (await notices()).length > 0 && (await second.resumeAgent(root.id)).status === 'idle');
  expect(await notices()).toHaveLength(1);
  const childLog = (await store.read(children[0]?.id ?? '')).events;
  expect(ofType(childLog, 'turn/end').map((e) => e.data.reason)).toEqual(['completed']);
});

it('a background job announced before the crash is resumed under its id, and its notice reaches its owner once', async () => {
  const before = memorySessions();
  const inBody = deferred();
  const first = runtime(before, 'one-shot', () => {
    inBody.resolve();
    return new Promise<never>(() => undefined);
  });
  const root = await first.createAgent({ model: route });
  await expect(root.run('spawn')).resolves.toMatchObject({ output: 'spawned' });
  await inBody.promise;
  const announced = ofType((await before.read(root.id)).events, 'tool/result')[0]?.data.content;
  expect(announced).toBe('started background subagent job job_1');
  const store = await copyOf(before);
  const second = runtime(store, 'one-shot');
  await expect(second.recover()).resolves.toEqual([]);
  const notices = async () =>
    ofType((await store.read(root.id)).events, 'user/message').filter((e) => e.data.source === 'job-completed');
  await until(async () => (await notices()).length > 0 && (await second.resumeAgent(root.id)).status === 'idle');
  expect((await notices()).map((e) => e.data.text)).toEqual([expect.stringContaining('background job job_1')]);
  const [child] = (await store.list()).filter((header) => header.parentSession === root.id);
  expect(ofType((await store.read(child?.id ?? '')).events, 'turn/end').map((e) => e.data.reason)).toEqual([
    'completed',
  ]);
});

describe('a continuable child’s settlement notice the crash kept from being written', () => {
  const settled = (events: SessionEvent[]) =>
    ofType(events, 'user/message').filter((e) => e.data.source === 'subagent-settled');

  /** A finished tree: the child's busy period ended and its notice reached the root, which ran on it. */
  async function settledTree() {
    const before = memorySessions();
    const first = runtime(before, 'continuable');
    const root = await first.createAgent({ model: route });
    await expect(root.run('spawn')).resolves.toMatchObject({ output: 'spawned' });
    await until(async () => settled((await before.read(root.id)).events).length > 0 && root.status === 'idle');
    await first.close();
    return { before, rootId: root.id };
  }

  /** The root's log as a kill right before the notice's write leaves it. */
  const beforeTheNotice = (rootId: string) => (id: string, events: SessionEvent[]) =>
    id === rootId
      ? events.slice(
          0,
          events.findIndex((e) => e.data.source === 'subagent-settled'),
        )
      : events;

  it('is delivered once by recover(), marked with the period it settles', async () => {
    const { before, rootId } = await settledTree();
    const [written] = settled((await before.read(rootId)).events);
    const [child] = (await before.list()).filter((header) => header.parentSession === rootId);
    expect(written?.data.settles).toEqual({ childId: child?.id, turn: 1 });
    const store = await copyOf(before, beforeTheNotice(rootId));
    expect(settled((await store.read(rootId)).events)).toHaveLength(0);
    const second = runtime(store, 'continuable');
    await expect(second.recover()).resolves.toEqual([]);
    await until(async () => settled((await store.read(rootId)).events).length > 0);
    const [notice] = settled((await store.read(rootId)).events);
    expect(notice?.data).toMatchObject({ text: written?.data.text, settles: { childId: child?.id, turn: 1 } });
    // The root takes it as it would have: a turn on the notice.
    await until(async () => (await second.resumeAgent(rootId)).status === 'idle');
    expect(ofType((await store.read(rootId)).events, 'turn/end')).toHaveLength(2);
    // Delivered once: a later recovery finds it written.
    const third = runtime(store, 'continuable');
    await second.close();
    await expect(third.recover()).resolves.toEqual([]);
    expect(settled((await store.read(rootId)).events)).toHaveLength(1);
  });

  it('is not delivered again when it was written (nor when an older notice carries no marker)', async () => {
    const { before, rootId } = await settledTree();
    const second = runtime(before, 'continuable');
    await expect(second.recover()).resolves.toEqual([]);
    expect(settled((await before.read(rootId)).events)).toHaveLength(1);
    await second.close();
    const unmarked = await copyOf(before, (_, events) =>
      events.map((e) => {
        if (e.data.source !== 'subagent-settled') return e;
        const { settles: _marker, ...data } = e.data;
        return { ...e, data };
      }),
    );
    const third = runtime(unmarked, 'continuable');
    await expect(third.recover()).resolves.toEqual([]);
    expect(settled((await unmarked.read(rootId)).events)).toHaveLength(1);
  });
});
