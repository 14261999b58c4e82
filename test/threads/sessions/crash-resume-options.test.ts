/**
 * Crash resume keeps a turn's own options (docs/sessions.md "Crash resume"): a `run()`'s budget and
 * outputSchema, and the budget a delegation gave a one-shot child, are recorded when the turn starts,
 * so the turn a crash interrupted resumes under them: `maxTokens` counts what the log shows was spent,
 * and the output is structured as the uninterrupted run's would be. The per-request context is never
 * written. The children the turn had finished before the crash count in its usage and its budget.
 */
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood, SessionEvent, SessionStore, ToolDefinition } from '../../../src/index.js';
import { createBrood, defineTool, memorySessions, scriptedModels, subagentTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
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

const answer = (value: string) => ({ toolCalls: [{ name: 'structured_output', arguments: { answer: value } }] });
const charge = { toolCalls: [{ name: 'charge', arguments: {} }] };
const scripts = [
  { match: 'effect', turns: [charge, { text: 'after: {{results}}' }] },
  { match: 'report', turns: [charge, answer('42'), { text: 'reported' }] },
  { match: 'early', turns: [answer('7'), charge, { text: 'reported early' }] },
  { match: 'delegate', turns: [{ toolCalls: [subagentCall('child: effect')] }, { text: 'root: {{results}}' }] },
  { match: 'first ask', turns: [{ toolCalls: [subagentCall('child: quick')] }, charge, { text: 'root done' }] },
  { match: 'child: quick', turns: [{ text: 'a quick answer' }] },
  // Two turns: the second is a run that waited behind the first when the host stopped.
  { match: 'queued', turns: [charge, { text: 'first done' }, answer('42'), { text: 'second done' }] },
];
const parameters = { type: 'object', properties: {} } as const;
const outputSchema = z.object({ answer: z.string() });

function chargeTool(execute: () => unknown): ToolDefinition {
  // Idempotent: the resumed turn runs the interrupted call again, as the uninterrupted run did.
  return defineTool({ name: 'charge', description: 'charges a card', parameters, idempotent: true, execute });
}

function runtime(sessions: SessionStore, childBudget?: { maxTokens: number }): Brood {
  // The killed host's runtime is closed with its `charge` call still held: a short grace ends it.
  const brood = createBrood({
    runner: 'inline',
    pool: { cancelGraceMs: 50 },
    sessions,
    models: [scriptedModels({ id: 'scripted', scripts })],
  });
  open.push(brood);
  brood.use(subagentTool({ provider: 'spawn', ...(childBudget ? { budget: childBudget } : {}) }));
  return brood;
}

/** A runtime whose `charge` never returns, and a promise that resolves once a body is inside it. */
function host(childBudget?: { maxTokens: number }): { brood: Brood; store: SessionStore; inside: Promise<void> } {
  const store = memorySessions();
  const brood = runtime(store, childBudget);
  const inside = deferred();
  brood.tools.register(
    chargeTool(() => {
      inside.resolve();
      return new Promise(() => undefined);
    }),
  );
  return { brood, store, inside: inside.promise };
}

/** A runtime on the crashed store, its `charge` answering at once. */
function resumer(store: SessionStore, childBudget?: { maxTokens: number }): Brood {
  const brood = runtime(store, childBudget);
  brood.tools.register(chargeTool(() => 'charged'));
  return brood;
}

function totals(events: SessionEvent[]): number[] {
  return ofType(events, 'assistant/message').map((e) => {
    const usage = e.data.usage as { inputTokens: number; outputTokens: number };
    return usage.inputTokens + usage.outputTokens;
  });
}

/** A token limit each of two requests fits alone and both together do not. */
function limitBetween([first = 0, second = 0]: number[]): number {
  const maxTokens = Math.max(first, second) + 1;
  expect(first + second).toBeGreaterThan(maxTokens);
  return maxTokens;
}

it('a run’s own budget holds on resume: maxTokens counts what its log shows was spent', async () => {
  const reference = resumer(memorySessions());
  const probe = await reference.createAgent({ model: route });
  await probe.run('effect');
  const maxTokens = limitBetween(totals((await reference.sessions.read(probe.id)).events));

  const first = host();
  const root = await first.brood.createAgent({ model: route });
  void root.run('effect', { budget: { maxTokens } }).catch(() => undefined);
  await first.inside;
  const [entry] = await resumer(await copyOf(first.store)).recover();
  await expect(entry?.result).resolves.toMatchObject({ stopReason: 'budget' });
});

it('a run’s outputSchema holds on resume: the resumed turn’s output is structured; its context is not written', async () => {
  const first = host();
  const root = await first.brood.createAgent({ model: route });
  void root.run('report', { outputSchema, context: { apiKey: 'secret-token' } }).catch(() => undefined);
  await first.inside;
  const store = await copyOf(first.store);
  expect(JSON.stringify((await store.read(root.id)).events)).not.toContain('secret-token');
  const [entry] = await resumer(store).recover();
  await expect(entry?.result).resolves.toMatchObject({ stopReason: 'completed', structured: { answer: '42' } });
});

it('a structured value recorded before the crash is the resumed turn’s structured output', async () => {
  const first = host();
  const root = await first.brood.createAgent({ model: route });
  void root.run('early', { outputSchema }).catch(() => undefined);
  await first.inside;
  const [entry] = await resumer(await copyOf(first.store)).recover();
  await expect(entry?.result).resolves.toMatchObject({ stopReason: 'completed', structured: { answer: '7' } });
});

it('a one-shot child’s delegation budget holds on resume, its prompt claimed or not', async () => {
  const reference = resumer(memorySessions());
  const probe = await reference.createAgent({ model: route });
  await probe.run('delegate');
  const [child] = (await reference.sessions.list()).filter((header) => header.parentSession === probe.id);
  const maxTokens = limitBetween(totals((await reference.sessions.read(child?.id ?? '')).events));

  for (const claimed of [true, false]) {
    const first = host({ maxTokens });
    const root = await first.brood.createAgent({ model: route });
    void root.run('delegate').catch(() => undefined);
    await first.inside;
    // Unclaimed: the host stopped after the child accepted its prompt and before a turn took it.
    const store = await copyOf(first.store, (id, events) =>
      claimed || id === root.id
        ? events
        : events.slice(
            0,
            events.findIndex((e) => e.type === 'turn/start'),
          ),
    );
    // The budget comes from the child's log: the runtime that resumes it configures none.
    const [entry] = await resumer(store).recover();
    await expect(entry?.result).resolves.toMatchObject({ stopReason: 'completed' });
    const [resumed] = (await store.list()).filter((header) => header.parentSession === root.id);
    const childLog = (await store.read(resumed?.id ?? '')).events;
    expect(ofType(childLog, 'turn/end').map((e) => e.data.reason)).toEqual(['budget']);
  }
});

it('a resumed child spends its parent’s turn budget again, as the delegation did', async () => {
  const reference = resumer(memorySessions());
  const probe = await reference.createAgent({ model: route });
  const expected = await probe.run('delegate');
  const own = expected.usageTree.usage.inputTokens + expected.usageTree.usage.outputTokens;
  const all = expected.usage.inputTokens + expected.usage.outputTokens;
  // The root's own requests fit, and so does the child within what the root had left; all together do not.
  const maxTokens = all - 1;
  expect(own).toBeLessThan(maxTokens);

  const first = host();
  const root = await first.brood.createAgent({ model: route });
  void root.run('delegate', { budget: { maxTokens } }).catch(() => undefined);
  await first.inside;
  const [entry] = await resumer(await copyOf(first.store)).recover();
  await expect(entry?.result).resolves.toMatchObject({ stopReason: 'budget' });
});

it('a resumed turn’s usage includes the children it had finished before the crash', async () => {
  const reference = resumer(memorySessions());
  const probe = await reference.createAgent({ model: route });
  const expected = await probe.run('first ask');
  expect(expected.usageTree.children).toHaveLength(1);

  const first = host();
  const root = await first.brood.createAgent({ model: route });
  void root.run('first ask').catch(() => undefined);
  await first.inside;
  const [entry] = await resumer(await copyOf(first.store)).recover();
  const result = await entry?.result;
  expect(result?.usage).toEqual(expected.usage);
  expect(result?.usageTree.total).toEqual(expected.usageTree.total);
  expect(result?.usageTree.children.map((child) => child.total)).toEqual(
    expected.usageTree.children.map((child) => child.total),
  );
});

it('a resumed turn’s maxTokens counts what the children it had finished spent', async () => {
  const reference = resumer(memorySessions());
  const probe = await reference.createAgent({ model: route });
  const expected = await probe.run('first ask');
  const own = expected.usageTree.usage.inputTokens + expected.usageTree.usage.outputTokens;
  const all = expected.usage.inputTokens + expected.usage.outputTokens;
  // The turn's own requests fit; with its child's they do not.
  const maxTokens = own + 1;
  expect(all).toBeGreaterThan(maxTokens);

  const first = host();
  const root = await first.brood.createAgent({ model: route });
  void root.run('first ask', { budget: { maxTokens: maxTokens + all } }).catch(() => undefined);
  await first.inside;
  const store = await copyOf(first.store);
  // The limit the resumed turn runs under: the one its turn/start recorded, lowered by hand.
  const events = (await store.read(root.id)).events.map((event) =>
    event.type === 'turn/start' ? { ...event, data: { ...event.data, budget: { maxTokens } } } : event,
  );
  const lowered = memorySessions();
  for (const header of await store.list()) {
    await lowered.create(header);
    await lowered.append(header.id, header.id === root.id ? events : (await store.read(header.id)).events);
  }
  const [entry] = await resumer(lowered).recover();
  await expect(entry?.result).resolves.toMatchObject({ stopReason: 'budget' });
});

it('a recorded budget or schema that is not one refuses the resume (INVALID_CONFIG); nothing runs without it', async () => {
  for (const recorded of [{ budget: { maxTokens: -1 } }, { outputSchema: { type: 'string' } }]) {
    const first = host();
    const root = await first.brood.createAgent({ model: route });
    void root.run('report', { outputSchema, budget: { maxTokens: 10_000 } }).catch(() => undefined);
    await first.inside;
    const store = memorySessions();
    for (const header of await first.store.list()) {
      const { events } = await first.store.read(header.id);
      await store.create(header);
      await store.append(
        header.id,
        events.map((event) =>
          event.type === 'turn/start' ? { ...event, data: { ...event.data, ...recorded } } : event,
        ),
      );
    }
    const length = (await store.read(root.id)).events.length;
    await expectCode(resumer(store).recover(), 'INVALID_CONFIG');
    expect((await store.read(root.id)).events).toHaveLength(length);
  }
});

it('a run that waited behind a running turn when the host stopped keeps its budget and outputSchema', async () => {
  for (const options of [{ outputSchema }, { budget: { maxTokens: 1 } }]) {
    const first = host();
    const root = await first.brood.createAgent({ model: route });
    void root.run('queued').catch(() => undefined);
    await first.inside;
    void root.run('then this', options).catch(() => undefined);
    await until(async () => ofType((await first.store.read(root.id)).events, 'user/message').length === 2);
    const store = await copyOf(first.store);
    const [entry] = await resumer(store).recover();
    await expect(entry?.result).resolves.toMatchObject({ output: 'first done' });
    const ended = async () => ofType((await store.read(root.id)).events, 'turn/end').map((e) => e.data.reason);
    await until(async () => (await ended()).length === 2);
    const log = (await store.read(root.id)).events;
    if ('outputSchema' in options) {
      const recorded = ofType(log, 'tool/result').find((e) => e.data.name === 'structured_output');
      expect(recorded?.data).toMatchObject({ isError: false, content: 'ok' });
      expect(await ended()).toEqual(['completed', 'completed']);
    } else expect(await ended()).toEqual(['completed', 'budget']);
  }
});
