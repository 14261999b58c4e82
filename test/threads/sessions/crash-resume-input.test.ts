/**
 * Crash resume, bad input (docs/sessions.md "Crash resume"): a corrupt store resumes nothing
 * (SESSION_CORRUPT naming file and line); a session another holder keeps is SESSION_LOCKED; a model
 * route gone from the catalog fails that agent's turn with a diagnostic while the others resume; a
 * tool no longer registered gets an error result naming it and the turn goes on; a call that was
 * waiting for approval stays pending with the host.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Brood, SessionEvent, SessionStore, ToolDefinition } from '../../../src/index.js';
import { createBrood, defineTool, fileSessions, memorySessions, scriptedModels } from '../../../src/index.js';
import type { FileSessionStore } from '../../../src/sessions/jsonl.js';
import { expectCode } from '../../support/codes.js';
import { deferred } from '../../support/deferred.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';

const open: Brood[] = [];
const stores: FileSessionStore[] = [];
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'brood-resume-input-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((brood) => brood.close()));
  // A store's open file handles are closed here, not left to the garbage collector.
  await Promise.all(stores.splice(0).map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** A file store on this test's directory, closed after the test. */
function files(): FileSessionStore {
  const store = fileSessions(dir);
  stores.push(store);
  return store;
}

const scripts = [
  { match: 'effect', turns: [{ toolCalls: [{ name: 'charge', arguments: {} }] }, { text: 'after: {{results}}' }] },
];
const other = { provider: 'other', model: 'scripted' } as const;
const parameters = { type: 'object', properties: {} } as const;

function charge(execute: () => unknown, approval?: 'ask'): ToolDefinition {
  return defineTool({
    name: 'charge',
    description: 'charges a card',
    parameters,
    execute,
    ...(approval ? { approval } : {}),
  });
}

function runtime(sessions: SessionStore, providers = ['scripted', 'other']): Brood {
  const brood = createBrood({
    runner: 'inline',
    // The killed host's runtime is closed with its `charge` calls still held: a short grace ends them.
    pool: { cancelGraceMs: 50 },
    sessions,
    models: providers.map((id) => scriptedModels({ id, scripts })),
  });
  open.push(brood);
  return brood;
}

/** Two roots (one per provider) each stopped inside `charge`; the store copied as a killed host leaves it. */
async function crashed(into: SessionStore, approval?: 'ask'): Promise<{ ids: string[] }> {
  const before = memorySessions();
  const first = runtime(before);
  let inside = 0;
  const both = deferred();
  first.tools.register(
    charge(() => {
      inside += 1;
      if (inside === 2) both.resolve();
      return new Promise(() => undefined);
    }, approval),
  );
  const roots = [await first.createAgent({ model: route }), await first.createAgent({ model: other })];
  for (const root of roots) void root.run('effect').catch(() => undefined);
  if (approval) {
    while (first.approvals.pending().length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  } else await both.promise;
  for (const header of await before.list()) {
    const { events } = await before.read(header.id);
    await into.create(header);
    await into.append(header.id, events);
    await into.flush(header.id);
    await into.release?.(header.id); // the killed host holds nothing any more
  }
  return { ids: roots.map((root) => root.id) };
}

async function log(store: SessionStore, id: string): Promise<SessionEvent[]> {
  return (await store.read(id)).events;
}

it('a corrupt store is SESSION_CORRUPT naming file and line, and nothing is resumed from it', async () => {
  const { ids } = await crashed(files());
  writeFileSync(join(dir, 'broken.jsonl'), '{"id":"broken","createdAt":1,"delegationDepth":0,"model":{}}\nnot json\n');
  const store = files();
  const lengths = await Promise.all(ids.map(async (id) => (await log(store, id)).length));
  const second = runtime(store);
  second.tools.register(charge(() => 'charged'));
  const error = await expectCode(second.recover(), 'SESSION_CORRUPT');
  expect(error.message).toContain('broken.jsonl');
  expect(await Promise.all(ids.map(async (id) => (await log(store, id)).length))).toEqual(lengths);
});

it('a session another holder keeps is SESSION_LOCKED', async () => {
  const { ids } = await crashed(files());
  const holder = files();
  await holder.acquire?.(ids[0] ?? '');
  const second = runtime(files());
  second.tools.register(charge(() => 'charged'));
  await expectCode(second.recover(), 'SESSION_LOCKED');
  await holder.release?.(ids[0] ?? '');
});

it('a route gone from the catalog fails that turn with a diagnostic; the others resume', async () => {
  const store = memorySessions();
  const { ids } = await crashed(store);
  const second = runtime(store, ['scripted']);
  second.tools.register(charge(() => 'charged'));
  const recovered = await second.recover();
  expect(recovered.map((entry) => entry.agent.id)).toEqual([ids[0]]);
  await expect(recovered[0]?.result).resolves.toMatchObject({ stopReason: 'completed' });
  const failed = ofType(await log(store, ids[1] ?? ''), 'turn/end');
  expect(failed.map((e) => e.data.reason)).toEqual(['error']);
  expect(failed[0]?.data.diagnostic).toMatch(/other\/scripted is not in this runtime's catalog/);
});

it('a tool no longer registered gets an error result naming it, and the turn goes on', async () => {
  const store = memorySessions();
  const { ids } = await crashed(store);
  const second = runtime(store);
  const recovered = await second.recover();
  expect(recovered).toHaveLength(2);
  for (const entry of recovered) await expect(entry.result).resolves.toMatchObject({ stopReason: 'completed' });
  const result = ofType(await log(store, ids[0] ?? ''), 'tool/result')[0];
  expect(result?.data).toMatchObject({ isError: true, errorCode: 'UNKNOWN_TOOL' });
  expect(result?.data.content).toContain('charge');
});

it('a call waiting for approval at the crash stays pending with the host; it never ran', async () => {
  const store = memorySessions();
  await crashed(store, 'ask');
  const second = runtime(store);
  let runs = 0;
  second.tools.register(charge(() => `charged ${++runs}`, 'ask'));
  const recovered = await second.recover();
  for (const entry of recovered) await expect(entry.result).resolves.toMatchObject({ stopReason: 'completed' });
  expect(second.approvals.pending()).toHaveLength(2);
  expect(runs).toBe(0);
  for (const entry of recovered) {
    const content = ofType(await log(store, entry.agent.id), 'tool/result')[0]?.data.content;
    expect(content).toContain('waiting for approval');
    expect(content).not.toContain('TOOL_OUTCOME_UNKNOWN');
  }
});

it('a resumed turn’s maxTokens counts what its log shows was spent before the crash', async () => {
  // The two requests' usage, from an uninterrupted run.
  const reference = runtime(memorySessions());
  reference.tools.register(charge(() => 'charged'));
  const probe = await reference.createAgent({ model: route });
  await probe.run('effect');
  const [u1 = 0, u2 = 0] = ofType(await log(reference.sessions, probe.id), 'assistant/message').map(
    (e) =>
      (e.data.usage as { inputTokens: number; outputTokens: number }).inputTokens +
      (e.data.usage as { outputTokens: number }).outputTokens,
  );
  // Each request alone fits; both together do not.
  const maxTokens = Math.max(u1, u2) + 1;
  expect(u1 + u2).toBeGreaterThan(maxTokens);

  const before = memorySessions();
  const first = runtime(before);
  const inBody = deferred();
  first.tools.register(
    charge(() => {
      inBody.resolve();
      return new Promise(() => undefined);
    }),
  );
  const root = await first.createAgent({ model: route, budget: { maxTokens } });
  void root.run('effect').catch(() => undefined);
  await inBody.promise;
  const store = memorySessions();
  for (const header of await before.list()) {
    await store.create(header);
    await store.append(header.id, (await before.read(header.id)).events);
  }
  const second = runtime(store);
  // Idempotent here, so the resumed request is the reference's second one, byte for byte.
  second.tools.register(
    defineTool({
      name: 'charge',
      description: 'charges a card',
      parameters,
      idempotent: true,
      execute: () => 'charged',
    }),
  );
  const [entry] = await second.recover();
  await expect(entry?.result).resolves.toMatchObject({ stopReason: 'budget' });
});

it('recover() options: an unknown key is INVALID_CONFIG, an aborted signal ABORTED, a closed runtime DISPOSED', async () => {
  const brood = runtime(memorySessions());
  await expectCode(brood.recover({ everything: true } as never), 'INVALID_CONFIG');
  await expectCode(brood.recover({ signal: AbortSignal.abort() }), 'ABORTED');
  await expect(brood.recover()).resolves.toEqual([]);
  await brood.close();
  await expectCode(brood.recover(), 'DISPOSED');
});
