/**
 * Crash resume (docs/sessions.md "Crash resume"), in process: a runtime is stopped at a chosen point
 * — its store is copied as it stands, which is what a killed host leaves — and a new runtime on the
 * copy runs `brood.recover()`. Nothing answered is asked again; a call whose `tool/call` is logged
 * with no result runs again only if its tool is `idempotent`, otherwise the model gets an error
 * result containing TOOL_OUTCOME_UNKNOWN; a foreground child interrupted inside its parent's call is
 * resumed in its own session and the call waits for it. (The SIGKILL version: test/processes/sessions.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodEvent, SessionEvent, SessionStore } from '../../../src/index.js';
import { defineTool, memorySessions, scriptedModels, subagentTool } from '../../../src/index.js';
import { deferred } from '../../support/deferred.js';
import { ofType } from '../../support/events.js';
import { subagentCall } from '../../support/fan-out.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS, type RunnerKind } from '../../support/runtime.js';
import { until } from '../../support/until.js';

const open: Brood[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((brood) => brood.close()));
});

const scripts = [
  {
    match: 'effect',
    turns: [{ toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] }, { text: 'root: {{results}}' }],
  },
  {
    match: 'upsert',
    turns: [{ toolCalls: [{ name: 'upsert', arguments: { key: 'k' } }] }, { text: 'root: {{results}}' }],
  },
  {
    match: 'slow',
    turns: [{ toolCalls: [{ name: 'upsert', arguments: { key: 's' } }] }, { text: 'slow: {{results}}' }],
  },
  { match: 'delegate', turns: [{ toolCalls: [subagentCall('child: charge')] }, { text: 'root got: {{results}}' }] },
  {
    match: 'child: charge',
    turns: [{ toolCalls: [{ name: 'upsert', arguments: { key: 'c' } }] }, { text: 'child did {{results}}' }],
  },
];

const schema = { type: 'object', properties: { amount: { type: 'number' }, key: { type: 'string' } } } as const;

interface Runs {
  charge: number;
  upsert: number;
}

/** A runtime with the same tools either side of the crash; `hold` keeps each body from finishing. */
/** The first runtime's model does not answer 'slow' in time: its request is in flight at the kill. */
const hanging = scripts.map((script) => (script.match === 'slow' ? { ...script, latencyMs: 60_000 } : script));

function runtime(
  runner: RunnerKind,
  sessions: SessionStore,
  runs: Runs,
  hold?: Promise<never>,
  started?: () => void,
  modelScripts: typeof hanging = scripts,
) {
  const brood = makeBrood(runner, { sessions, models: [scriptedModels({ id: 'scripted', scripts: modelScripts })] });
  open.push(brood);
  brood.use(subagentTool({ provider: 'spawn' }));
  const body = (name: keyof Runs) => async () => {
    runs[name] += 1;
    started?.();
    if (hold) await hold;
    return `${name} done`;
  };
  brood.tools.register(
    defineTool({ name: 'charge', description: 'charges a card', parameters: schema, execute: body('charge') }),
  );
  brood.tools.register(
    defineTool({
      name: 'upsert',
      description: 'writes a row',
      parameters: schema,
      idempotent: true,
      execute: body('upsert'),
    }),
  );
  return brood;
}

/** What a killed host leaves: every session as it stands now, in a store nobody holds. */
async function copyOf(from: SessionStore): Promise<SessionStore> {
  const to = memorySessions();
  for (const header of await from.list()) {
    const { events } = await from.read(header.id);
    await to.create(header);
    if (events.length > 0) await to.append(header.id, events);
  }
  return to;
}

/** Like copyOf, with each session's events cut by `cut` (what a kill at an earlier point leaves). */
async function cutCopyOf(from: SessionStore, cut: (id: string, events: SessionEvent[]) => SessionEvent[]) {
  const to = memorySessions();
  for (const header of await from.list()) {
    const { events } = await from.read(header.id);
    await to.create(header);
    await to.append(header.id, cut(header.id, events));
  }
  return to;
}

/** Runs `prompt` on a first runtime until a tool body has started, and copies the store at that moment. */
async function crashInsideTool(runner: RunnerKind, prompt: string, runs: Runs) {
  const before = memorySessions();
  const inBody = deferred();
  const first = runtime(runner, before, runs, new Promise<never>(() => undefined), () => inBody.resolve());
  const root = await first.createAgent({ model: route });
  void root.run(prompt).catch(() => undefined);
  await inBody.promise;
  return { store: await copyOf(before), rootId: root.id };
}

async function events(store: SessionStore, id: string): Promise<SessionEvent[]> {
  return (await store.read(id)).events;
}

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('a non-idempotent call of unknown outcome is not run again: the model gets TOOL_OUTCOME_UNKNOWN', async () => {
    const runs = { charge: 0, upsert: 0 };
    const { store, rootId } = await crashInsideTool(runner, 'effect', runs);
    const second = runtime(runner, store, runs);
    const seen: BroodEvent[] = [];
    const watching = (async () => {
      for await (const event of second.events()) seen.push(event);
    })();
    const recovered = await second.recover();
    expect(recovered.map((entry) => [entry.agent.id, entry.turn])).toEqual([[rootId, 1]]);
    const result = await recovered[0]?.result;
    expect(result).toMatchObject({ stopReason: 'completed' });
    expect(result?.output).toContain('TOOL_OUTCOME_UNKNOWN');
    expect(runs.charge).toBe(1);
    const log = await events(store, rootId);
    // The answered request is not sent again: one request before the crash, one after.
    expect(ofType(log, 'model/request')).toHaveLength(2);
    expect(ofType(log, 'tool/call')).toHaveLength(1);
    expect(ofType(log, 'turn/end').map((e) => e.data.reason)).toEqual(['completed']);
    expect(seen.find((event) => event.type === 'recovered')).toMatchObject({
      agentId: rootId,
      turn: 1,
      replayedRequests: 0,
      rerunCalls: 0,
      unknownCalls: 1,
    });
    await expect(second.recover()).resolves.toEqual([]);
    await second.close();
    await watching;
  });

  it('a request in flight at the crash (logged, unanswered) is sent again, once', async () => {
    const runs = { charge: 0, upsert: 0 };
    const before = memorySessions();
    const first = runtime(runner, before, runs, undefined, undefined, hanging);
    const root = await first.createAgent({ model: route });
    void root.run('slow').catch(() => undefined);
    // The request is logged and waits on the model's latency: that is the kill point.
    for (;;) {
      const { events: log } = await before.read(root.id);
      if (ofType(log, 'model/request').length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const store = await copyOf(before);
    const second = runtime(runner, store, runs);
    const seen: BroodEvent[] = [];
    const watching = (async () => {
      for await (const event of second.events()) seen.push(event);
    })();
    const [entry] = await second.recover();
    await expect(entry?.result).resolves.toMatchObject({ stopReason: 'completed', output: 'slow: upsert done' });
    const log = await events(store, root.id);
    expect(ofType(log, 'model/request')).toHaveLength(3);
    expect(ofType(log, 'assistant/message')).toHaveLength(2);
    expect(runs.upsert).toBe(1);
    expect(seen.find((event) => event.type === 'recovered')).toMatchObject({ replayedRequests: 1, unknownCalls: 0 });
    await second.close();
    await watching;
  });

  it('an idempotent call of unknown outcome runs again and its result is the turn’s', async () => {
    const runs = { charge: 0, upsert: 0 };
    const { store, rootId } = await crashInsideTool(runner, 'upsert', runs);
    const second = runtime(runner, store, runs);
    const [entry] = await second.recover();
    await expect(entry?.result).resolves.toMatchObject({ stopReason: 'completed', output: 'root: upsert done' });
    expect(runs.upsert).toBe(2);
    expect(ofType(await events(store, rootId), 'model/request')).toHaveLength(2);
  });

  it('cancelling the resumed parent’s turn cancels the child its call is waiting for', async () => {
    const runs = { charge: 0, upsert: 0 };
    const { store, rootId } = await crashInsideTool(runner, 'delegate', runs);
    const inBody = deferred();
    const second = runtime(runner, store, runs, new Promise<never>(() => undefined), () => inBody.resolve());
    const [entry] = await second.recover();
    await inBody.promise; // the resumed child is running its tool again
    entry?.agent.cancel();
    await expect(entry?.result).resolves.toMatchObject({ stopReason: 'aborted' });
    const [child] = (await store.list()).filter((h) => h.parentSession === rootId);
    await until(async () => ofType(await events(store, child?.id ?? ''), 'turn/end').length > 0);
    expect(ofType(await events(store, child?.id ?? ''), 'turn/end').map((e) => e.data.reason)).toEqual(['aborted']);
  });

  it('a child that finished before its parent logged the result gives its logged result, and is not run again', async () => {
    const runs = { charge: 0, upsert: 0 };
    const before = memorySessions();
    const first = runtime(runner, before, runs);
    const root = await first.createAgent({ model: route });
    await expect(root.run('delegate')).resolves.toMatchObject({ output: 'root got: child did upsert done' });
    // The kill came after the child's turn ended and before the parent logged the call's result.
    const store = await cutCopyOf(before, (id, events) =>
      id === root.id ? events.slice(0, events.findIndex((event) => event.type === 'tool/call') + 1) : events,
    );
    const [child] = (await store.list()).filter((h) => h.parentSession === root.id);
    const childBefore = (await events(store, child?.id ?? '')).length;
    const second = runtime(runner, store, runs);
    const [entry] = await second.recover();
    await expect(entry?.result).resolves.toMatchObject({
      stopReason: 'completed',
      output: 'root got: child did upsert done',
    });
    expect((await events(store, child?.id ?? '')).length).toBe(childBefore);
    expect(runs.upsert).toBe(1);
  });

  it('a foreground child interrupted inside its parent’s call is resumed in its own session, not started again', async () => {
    const runs = { charge: 0, upsert: 0 };
    const { store, rootId } = await crashInsideTool(runner, 'delegate', runs);
    const childrenBefore = (await store.list()).filter((h) => h.parentSession === rootId);
    expect(childrenBefore).toHaveLength(1);
    const second = runtime(runner, store, runs);
    const [entry] = await second.recover();
    await expect(entry?.result).resolves.toMatchObject({
      stopReason: 'completed',
      output: 'root got: child did upsert done',
    });
    const children = (await store.list()).filter((h) => h.parentSession === rootId);
    expect(children.map((h) => h.id)).toEqual(childrenBefore.map((h) => h.id));
    const childLog = await events(store, children[0]?.id ?? '');
    expect(ofType(childLog, 'turn/start')).toHaveLength(1);
    expect(ofType(childLog, 'model/request')).toHaveLength(2);
    expect(runs.upsert).toBe(2); // idempotent: run again inside the resumed child
  });
});

describe.each(RUNNERS)("runner: '%s', Code Mode", (runner) => {
  it('a run_code call cut by the crash is of unknown outcome: its program does not run again', async () => {
    const codeScripts = [
      {
        match: 'program',
        turns: [
          {
            toolCalls: [{ name: 'run_code', arguments: { description: 'p', code: 'return await tools.charge({});' } }],
          },
          { text: 'after: {{results}}' },
        ],
      },
    ];
    let charges = 0;
    const inBody = deferred();
    const make = (sessions: SessionStore, hold: boolean) => {
      const brood = makeBrood(runner, {
        sessions,
        codeMode: 'code',
        models: [scriptedModels({ id: 'scripted', scripts: codeScripts })],
      });
      open.push(brood);
      brood.tools.register(
        defineTool({
          name: 'charge',
          description: 'charges a card',
          parameters: { type: 'object', properties: {} },
          execute: () => {
            charges += 1;
            inBody.resolve();
            return hold ? new Promise(() => undefined) : 'charged';
          },
        }),
      );
      return brood;
    };
    const before = memorySessions();
    const first = make(before, true);
    const root = await first.createAgent({ model: route });
    void root.run('program').catch(() => undefined);
    await inBody.promise;
    const store = await copyOf(before);
    const [entry] = await make(store, false).recover();
    const result = await entry?.result;
    expect(result).toMatchObject({ stopReason: 'completed' });
    expect(result?.output).toContain('TOOL_OUTCOME_UNKNOWN');
    expect(charges).toBe(1);
  });
});
