/**
 * Crash resume of background jobs and continuable children (docs/sessions.md "Crash resume"): an
 * owner restored after a crash knows its jobs again — one that had finished answers job_output with its
 * logged result, and its notice, if the crash came before it was written, is delivered once; one whose
 * child was interrupted is resumed under its id, whoever owns it (a one-shot child included). A
 * continuable child whose parent, a one-shot child, had finished goes on by itself.
 */
import { afterEach, expect, it } from 'vitest';
import type { Brood, SessionEvent, SessionStore } from '../../../src/index.js';
import { createBrood, defineTool, memorySessions, scriptedModels, subagentTool } from '../../../src/index.js';
import { ofType } from '../../support/events.js';
import { subagentCall } from '../../support/fan-out.js';
import { route } from '../../support/route.js';
import { copyOf } from '../../support/store-copy.js';
import { until } from '../../support/until.js';

const open: Brood[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((brood) => brood.close()));
});

const upsert = { toolCalls: [{ name: 'upsert', arguments: {} }] };
const readJob = (wait: boolean) => ({ toolCalls: [{ name: 'job_output', arguments: { job_id: 'job_1', wait } }] });
const scripts = [
  {
    match: 'spawn job',
    turns: [
      { toolCalls: [subagentCall('child: work', 'worker', { run_in_background: true })] },
      { text: 'spawned' },
      { text: 'noted' },
      readJob(false),
      { text: 'read: {{results}}' },
    ],
  },
  { match: 'child: work', turns: [{ text: 'child finished' }] },
  {
    match: 'spawn held',
    turns: [
      { toolCalls: [subagentCall('leaf: work', 'leaf', { run_in_background: true })] },
      { text: 'spawned' },
      readJob(false),
      { text: 'read: {{results}}' },
    ],
  },
  { match: 'nest job', turns: [{ toolCalls: [subagentCall('mid: job')] }, { text: 'root: {{results}}' }] },
  {
    match: 'mid: job',
    turns: [
      { toolCalls: [subagentCall('leaf: work', 'leaf', { run_in_background: true })] },
      upsert,
      readJob(true),
      { text: 'mid read: {{results}}' },
    ],
  },
  {
    match: 'nest continuable',
    turns: [
      { toolCalls: [subagentCall('mid: continuable', 'mid', { run_in_background: false })] },
      { text: 'root done' },
    ],
  },
  { match: 'mid: continuable', turns: [{ toolCalls: [subagentCall('leaf: work', 'leaf')] }, { text: 'mid done' }] },
  { match: 'leaf: work', turns: [upsert, { text: 'leaf finished' }] },
];

/** `hold` keeps every `upsert` body from finishing; `inside` counts the bodies that started. */
function runtime(sessions: SessionStore, backgroundMode: 'one-shot' | 'continuable', hold = false) {
  const brood = createBrood({
    runner: 'inline',
    pool: { cancelGraceMs: 50 },
    sessions,
    models: [scriptedModels({ id: 'scripted', scripts })],
  });
  open.push(brood);
  brood.use(subagentTool({ provider: 'spawn', enableRunInBackground: true, backgroundMode }));
  const inside = { count: 0 };
  brood.tools.register(
    defineTool({
      name: 'upsert',
      description: 'writes a row',
      parameters: { type: 'object', properties: {} },
      idempotent: true,
      execute: () => {
        inside.count += 1;
        return hold ? new Promise(() => undefined) : 'upserted';
      },
    }),
  );
  return { brood, inside };
}

async function notices(store: SessionStore, id: string): Promise<string[]> {
  const messages = ofType((await store.read(id)).events, 'user/message');
  return messages.filter((e) => e.data.source === 'job-completed').map((e) => String(e.data.text));
}

async function turnEnds(store: SessionStore, id: string): Promise<string[]> {
  return ofType((await store.read(id)).events, 'turn/end').map((e) => String(e.data.reason));
}

async function childOf(store: SessionStore, parentId: string): Promise<string> {
  const [child] = (await store.list()).filter((header) => header.parentSession === parentId);
  return child?.id ?? '';
}

/** A root whose background job finished and whose notice it took, before the store is copied. */
async function finishedJob(): Promise<{ store: SessionStore; rootId: string }> {
  const { brood } = runtime(memorySessions(), 'one-shot');
  const root = await brood.createAgent({ model: route });
  await expect(root.run('spawn job')).resolves.toMatchObject({ output: 'spawned' });
  await until(async () => (await turnEnds(brood.sessions, root.id)).length === 2);
  return { store: brood.sessions, rootId: root.id };
}

it('after a restart, job_output reads a job that had finished before it', async () => {
  const before = await finishedJob();
  const store = await copyOf(before.store);
  const { brood } = runtime(store, 'one-shot');
  const root = await brood.resumeAgent(before.rootId);
  const result = await root.run('read it');
  expect(result.output).toContain('read: ');
  expect(result.output).toContain('child finished');
  expect(await notices(store, before.rootId)).toHaveLength(1);
});

it('a job notice the crash kept from being written is delivered once after recovery', async () => {
  const before = await finishedJob();
  // The crash came after the child's turn/end and before its owner's notice was written.
  const isNotice = (event: SessionEvent) => event.type === 'user/message' && event.data.source === 'job-completed';
  const store = await copyOf(before.store, (id, events) =>
    id === before.rootId ? events.slice(0, events.findIndex(isNotice)) : events,
  );
  expect(await notices(store, before.rootId)).toEqual([]);
  const second = runtime(store, 'one-shot').brood;
  for (const entry of await second.recover()) await entry.result;
  await until(async () => (await turnEnds(store, before.rootId)).length === 2);
  expect(await notices(store, before.rootId)).toEqual([expect.stringContaining('background job job_1')]);
  await second.close();
  // Once: a later recovery finds it written.
  await expect(runtime(store, 'one-shot').brood.recover()).resolves.toEqual([]);
  expect(await notices(store, before.rootId)).toHaveLength(1);
});

it('a job stopped with its owner (its runtime closed) gets no notice when the owner is resumed', async () => {
  const store = memorySessions();
  const first = runtime(store, 'one-shot', true);
  const root = await first.brood.createAgent({ model: route });
  await expect(root.run('spawn held')).resolves.toMatchObject({ output: 'spawned' });
  await until(() => first.inside.count === 1);
  await first.brood.close();
  const again = await runtime(store, 'one-shot').brood.resumeAgent(root.id);
  const result = await again.run('read it');
  expect(result.output).toContain('[status: killed]');
  expect(await notices(store, root.id)).toEqual([]);
});

it('a job owned by a one-shot child is resumed with it: the child reads its output, and gets its notice once', async () => {
  const first = runtime(memorySessions(), 'one-shot', true);
  const root = await first.brood.createAgent({ model: route });
  void root.run('nest job').catch(() => undefined);
  // The mid child waits in its own upsert while its job's leaf waits in another.
  await until(() => first.inside.count === 2);
  const store = await copyOf(first.brood.sessions);
  const [entry] = await runtime(store, 'one-shot').brood.recover();
  await expect(entry?.result).resolves.toMatchObject({ stopReason: 'completed' });
  const mid = await childOf(store, root.id);
  const leaf = await childOf(store, mid);
  expect(await turnEnds(store, leaf)).toEqual(['completed']);
  const read = ofType((await store.read(mid)).events, 'tool/result').find((e) => e.data.name === 'job_output');
  expect(read?.data.content).toContain('leaf finished');
  expect(await notices(store, mid)).toEqual([expect.stringContaining('background job job_1')]);
});

it('a continuable child whose one-shot parent had finished goes on by itself after recovery', async () => {
  const first = runtime(memorySessions(), 'continuable', true);
  const root = await first.brood.createAgent({ model: route });
  await expect(root.run('nest continuable')).resolves.toMatchObject({ output: 'root done' });
  await until(() => first.inside.count === 1);
  const store = await copyOf(first.brood.sessions);
  const leaf = await childOf(store, await childOf(store, root.id));
  expect(await turnEnds(store, leaf)).toEqual([]);
  await expect(runtime(store, 'continuable').brood.recover()).resolves.toEqual([]);
  await until(async () => (await turnEnds(store, leaf)).length === 1);
  expect(await turnEnds(store, leaf)).toEqual(['completed']);
});
