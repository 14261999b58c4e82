/**
 * Per-request context: `run(text, { context })` reaches every tool of the run as `ctx.context`, three
 * delegations down included, on both runners; it is never written (no session file, no span, even with
 * captureContent on); a value that cannot be structured-cloned is INVALID_ARGS before anything runs.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood, SessionEvent, ToolContext } from '../../../src/index.js';
import { defineTool, fileSessions, messageTools, scriptedModels, subagentTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { memoryTracing } from '../../support/otel.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';
import { until } from '../../support/until.js';

/** Stands for a credential: it must never be found in anything brood writes. */
const SECRET = 'sk-context-marker-5c1e';
const context = { userId: 'u1', tenant: 't9', token: SECRET };

const delegate = (prompt: string) => ({
  toolCalls: [{ name: 'subagent', arguments: { description: prompt, prompt } }],
});

const ask = { toolCalls: [{ name: 'whoami', arguments: {} }] };
const runCode = (code: string) => ({ toolCalls: [{ name: 'run_code', arguments: { description: 'ask', code } }] });

/** lead → depth 1 → depth 2 → depth 3, which asks `whoami`; every level answers with what it was told. */
const models = [
  scriptedModels({
    id: 'scripted',
    scripts: [
      { match: 'ctx-lead', turns: [delegate('ctx-one')] },
      { match: 'ctx-one', turns: [delegate('ctx-two')] },
      { match: 'ctx-two', turns: [delegate('ctx-three')] },
      { match: 'ctx-three', turns: [{ toolCalls: [{ name: 'whoami', arguments: {} }] }] },
      // One agent, three runs: each asks once and answers with what it was told.
      { match: 'guarded', turns: [{ toolCalls: [{ name: 'guarded', arguments: {} }] }] },
      { match: 'code-whoami', turns: [runCode('return await tools.whoami({});')] },
      { match: 'ask-whoami', turns: [ask, { text: '{{results}}' }, ask, { text: '{{results}}' }, ask] },
    ],
  }),
];

/** What the deepest tool saw: the depth it ran at and who the context names (never the token itself). */
function whoami(seen: unknown[]) {
  return defineTool({
    name: 'whoami',
    description: 'the user this request is for',
    parameters: z.object({}),
    execute: (_args, ctx: ToolContext) => {
      seen.push(ctx.context);
      const given = ctx.context as typeof context | undefined;
      const valid = given?.token === SECRET;
      return `depth ${ctx.agent?.depth}: ${given?.userId ?? 'nobody'}@${given?.tenant ?? '-'} ${valid ? 'ok' : 'no token'}`;
    },
  });
}

let dir: string;
let brood: Brood | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brood-context-'));
});
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('a tool three delegations down reads the run’s context; no session file and no span holds it', async () => {
    const { provider, exporter } = memoryTracing();
    const seen: unknown[] = [];
    brood = makeBrood(runner, {
      models,
      sessions: fileSessions(dir),
      telemetry: { tracerProvider: provider, captureContent: true },
    });
    brood.use(subagentTool({ provider: 'spawn' }));
    brood.tools.register(whoami(seen));
    const lead = await brood.createAgent({ model: route });

    const result = await lead.run('ctx-lead', { context });

    expect(result.stopReason).toBe('completed');
    expect(result.output).toBe('depth 3: u1@t9 ok');
    expect(seen).toEqual([context]);
    await brood.close();
    brood = undefined;
    const files = await filesUnder(dir);
    expect(files.length).toBeGreaterThanOrEqual(4); // the lead and its three descendants
    for (const file of files) expect(await readFile(file, 'utf8'), file).not.toContain(SECRET);
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(0);
    expect(JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events]))).not.toContain(SECRET);
  });

  it('each run has its own context, and a run without one gives its tools none', async () => {
    const seen: unknown[] = [];
    brood = makeBrood(runner, { models });
    brood.tools.register(whoami(seen));
    const agent = await brood.createAgent({ model: route });
    expect((await agent.run('ask-whoami', { context: { userId: 'a', tenant: 'x' } })).output).toBe(
      'depth 0: a@x no token',
    );
    expect((await agent.run('ask-whoami again')).output).toBe('depth 0: nobody@- no token');
    expect((await agent.stream('ask-whoami once more', { context: { userId: 'b', tenant: 'y' } }).result).output).toBe(
      'depth 0: b@y no token',
    );
    expect(seen).toEqual([{ userId: 'a', tenant: 'x' }, undefined, { userId: 'b', tenant: 'y' }]);
  });
});

/**
 * A session a crash left behind: turn 1 asked for `whoami` and died before the call ran; a second
 * message was accepted and never claimed.
 */
async function crashedSession(id: string): Promise<void> {
  const store = fileSessions(dir);
  await store.create({ id, createdAt: Date.now(), delegationDepth: 0, model: route });
  const events: Omit<SessionEvent, 'seq'>[] = [
    { type: 'agent/descriptor', data: { model: route, codeMode: 'native' } },
    { type: 'user/message', data: { id: 'm1', text: 'ask-whoami', source: 'user' } },
    { type: 'turn/start', data: { turn: 1, messageIds: ['m1'] } },
    { type: 'model/request', data: { provider: 'scripted', model: 'scripted', system: '', tools: ['whoami'] } },
    {
      type: 'assistant/message',
      data: { text: '', toolCalls: [{ callId: 'call_0_0', name: 'whoami', arguments: '{}' }], finish: 'tool-calls' },
    },
    { type: 'user/message', data: { id: 'm2', text: 'ask-whoami again', source: 'user' } },
  ].map((event) => ({ time: Date.now(), ...event }));
  await store.append(
    id,
    events.map((event, seq) => ({ seq, ...event })),
  );
  await store.flush(id);
  await store.close();
}

describe.each(RUNNERS)("runner: '%s', after a crash", (runner) => {
  it.each(['resumeAgent', 'recover'] as const)(
    '%s({ context }) gives it to the interrupted turn and to the message no turn took; it is not written',
    async (how) => {
      await crashedSession('crashed');
      const seen: unknown[] = [];
      brood = makeBrood(runner, { models, sessions: fileSessions(dir) });
      brood.tools.register(whoami(seen));
      const agent =
        how === 'resumeAgent'
          ? await brood.resumeAgent('crashed', { context })
          : (await brood.recover({ context }))[0]?.agent;
      await agent?.whenIdle();
      expect(seen).toEqual([context, context]);
      const events = (await brood.sessions.read('crashed')).events;
      expect(events.filter((event) => event.type === 'turn/end')).toHaveLength(2);
      expect(JSON.stringify(events)).not.toContain(SECRET);
    },
  );

  it('resumeAgent refuses a context that cannot be structured-cloned (INVALID_ARGS), restoring nothing', async () => {
    await crashedSession('crashed');
    brood = makeBrood(runner, { models, sessions: fileSessions(dir) });
    await expectCode(brood.resumeAgent('crashed', { context: { check: () => true } }), 'INVALID_ARGS');
    await expectCode(brood.recover({ context: { check: () => true } }), 'INVALID_ARGS');
    expect((await brood.sessions.read('crashed')).events).toHaveLength(6);
  });
});

describe.each(RUNNERS)("runner: '%s', other paths to a tool", (runner) => {
  it('a call from inside run_code reads the context of the run that ran the program', async () => {
    const seen: unknown[] = [];
    brood = makeBrood(runner, { models });
    brood.tools.register(whoami(seen));
    const agent = await brood.createAgent({ model: route, codeMode: 'code' });
    const result = await agent.run('code-whoami', { context });
    expect(result.stopReason).toBe('completed');
    expect(seen).toEqual([context]);
  });

  it("a tool's approval rule reads the context of the run the call serves", async () => {
    brood = makeBrood(runner, { models });
    brood.tools.register(
      defineTool({
        name: 'guarded',
        description: 'for admins only',
        parameters: z.object({}),
        approval: (_args, ctx) => ((ctx.context as { role?: string } | undefined)?.role === 'admin' ? 'allow' : 'deny'),
        execute: () => 'ran',
      }),
    );
    const outcome = async (role: string) => {
      const agent = await brood!.createAgent({ model: route });
      await agent.run('guarded', { context: { role } });
      const results = (await brood!.sessions.read(agent.id)).events.filter((event) => event.type === 'tool/result');
      return results.map((event) => (event.data as { errorCode?: string }).errorCode ?? 'ran');
    };
    expect(await outcome('admin')).toEqual(['ran']);
    expect(await outcome('guest')).toEqual(['APPROVAL_DENIED']);
  });

  it("a continuable child's first turn reads the starting call's context, each followup the sending call's", async () => {
    const seen: unknown[] = [];
    brood = makeBrood(runner, { models });
    brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable' }));
    brood.use(messageTools());
    brood.tools.register(whoami(seen));
    const parent = await brood.createAgent({ model: route });
    const first = { userId: 'first', tenant: 't1' };
    const started = await parent.tools.execute({
      name: 'subagent',
      arguments: { description: 'bg', prompt: 'ask-whoami in the background', run_in_background: true },
      context: first,
    });
    const { subagentId } = started.value as { subagentId: string };
    await until(() => seen.length === 1);
    const second = { userId: 'second', tenant: 't2' };
    const sent = await parent.tools.execute({
      name: 'send_message',
      arguments: { subagent_id: subagentId, message: 'once more' },
      context: second,
    });
    expect(sent.isError).toBe(false);
    await until(() => seen.length === 2);
    expect(seen).toEqual([first, second]);
  });
});

describe('a context that cannot be structured-cloned', () => {
  it('is INVALID_ARGS at run (rejected) and at stream (thrown synchronously); nothing is accepted', async () => {
    brood = makeBrood('inline', { models, sessions: fileSessions(dir) });
    const agent = await brood.createAgent({ model: route });
    const before = (await brood.sessions.read(agent.id)).events.length;
    const error = await expectCode(
      agent.run('ask-whoami', { context: { token: SECRET, check: () => true } }),
      'INVALID_ARGS',
    );
    expect(error.message).not.toContain(SECRET);
    expectCode(() => agent.stream('ask-whoami', { context: { check: () => true } }), 'INVALID_ARGS');
    expect((await brood.sessions.read(agent.id)).events.length).toBe(before);
  });
});
