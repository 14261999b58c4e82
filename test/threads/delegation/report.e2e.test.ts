/**
 * SPEC §16 "Reports": a continuable child's `report` tool and `brood.subagents.reportFrom`,
 * through the public API. The parents run a witness model (fixtures/witness-adapter.mjs) whose every
 * reply is the list of user-role texts its request carried, so each test reads what the parent's
 * model saw, step by step, from the parent's session log; the children run scripted models.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type Agent,
  type BroodEvent,
  defineTool,
  fileSessions,
  memorySessions,
  moduleAdapter,
  type SessionEvent,
  type SessionStore,
  scriptedModels,
  subagentTool,
} from '../../../src/index.js';
import { REPORT_GUIDANCE } from '../../../src/subagents/report.js';
import { expectCode } from '../../support/codes.js';
import { deferred } from '../../support/deferred.js';
import { ofType } from '../../support/events.js';
import { assertBuilt, runCli } from '../../support/run-cli.js';
import { closeAfterEach, type Harness, harness, isNotice, type Script } from '../subagents/helpers.js';

const { open, dirs } = closeAfterEach();

const WITNESS = { provider: 'witness', model: 'w' } as const;
const SCRIPTED = { provider: 'scripted', model: 'scripted' } as const;

type WitnessStep = { toolCalls: { name: string; arguments: unknown }[] };

function setup(scripts: Script[], parentScript: WitnessStep[] = [], inner?: SessionStore): Harness {
  const witness = moduleAdapter({
    id: 'witness',
    models: ['w'],
    options: { script: parentScript },
    moduleUrl: new URL('./fixtures/witness-adapter.mjs', import.meta.url).href,
  });
  const h = harness({ models: [scriptedModels({ id: 'scripted', scripts }), witness], ...(inner ? { inner } : {}) });
  open.push(h);
  return h;
}

const startCall = (prompt: string): WitnessStep => ({
  toolCalls: [{ name: 'subagent', arguments: { description: 'worker', prompt } }],
});
const reportCall = (output: string) => ({ toolCalls: [{ name: 'report', arguments: { output } }] });
const reportText = (childId: string, output: string): string => `Background subagent ${childId} reported:\n${output}`;
const isReport = (event: SessionEvent): boolean =>
  event.type === 'user/message' && event.data.source === 'subagent-report';
/** What the witness model was shown in a request: its reply. */
const saw = (reply: SessionEvent | undefined): unknown => JSON.parse(String(reply?.data.text));

function startedChild(h: Harness, parentId: string): string {
  const started = ofType(h.tap.log(parentId), 'tool/result').find((e) => e.data.name === 'subagent');
  const childId = /^started subagent (\S+)$/.exec(String(started?.data.content))?.[1];
  if (childId === undefined) throw new Error(`no continuable child started by ${parentId}`);
  return childId;
}

/** Waits until the turn that claimed `messageId` ended. */
async function turnOf(h: Harness, agentId: string, messageId: string): Promise<void> {
  const start = await h.tap.waitFor(agentId, 'turn/start', (e) => (e.data.messageIds as string[]).includes(messageId));
  await h.tap.waitFor(agentId, 'turn/end', (e) => e.data.turn === start.data.turn);
}

/** A witness parent runs 'go' (its script starts one continuable child) until the child's notice turn ended. */
async function delegateUntilSettled(h: Harness) {
  const parent = await h.brood.createAgent({ model: WITNESS });
  await parent.run('go');
  const childId = startedChild(h, parent.id);
  const notice = await h.tap.waitFor(parent.id, 'user/message', isNotice);
  await turnOf(h, parent.id, String(notice.data.id));
  return { parent, childId, notice, log: h.tap.log(parent.id) };
}

function startContinuable(h: Harness, parent: Agent, prompt: string, reportDelivery?: 'next-step' | 'quiet') {
  return h.brood.subagents.startContinuable({
    provider: 'spawn',
    label: 'worker',
    signal: new AbortController().signal,
    request: { parent, prompt, agentOptions: SCRIPTED },
    ...(reportDelivery ? { reportDelivery } : {}),
  });
}

describe('continuable children report back', () => {
  it('a child reports twice, then settles: the parent sees both reports, then the notice, in order', async () => {
    const h = setup(
      [{ match: 'survey task', turns: [reportCall('finding one'), reportCall('finding two'), { text: 'all done' }] }],
      [startCall('survey task')],
    );
    h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable', agentOptions: SCRIPTED }));
    const events: BroodEvent[] = [];
    const childEnded = deferred();
    const watching = (async () => {
      for await (const event of h.brood.events()) {
        events.push(event);
        if (event.type === 'subagent-end' && event.depth === 0) break;
      }
      childEnded.resolve();
    })();
    const { parent, childId, notice, log } = await delegateUntilSettled(h);
    const reports = log.filter(isReport);
    expect(reports.map((e) => e.data.text)).toEqual([
      reportText(childId, 'finding one'),
      reportText(childId, 'finding two'),
    ]);
    expect(reports.map((e) => e.data.from)).toEqual([childId, childId]);
    expect(log.indexOf(reports[1]!)).toBeLessThan(log.indexOf(notice));
    // The notice's turn was shown the whole conversation: the reports first, in the order made.
    expect(saw(ofType(log, 'assistant/message').at(-1))).toEqual([
      'go',
      reportText(childId, 'finding one'),
      reportText(childId, 'finding two'),
      notice.data.text,
    ]);
    // The child's tool answers name the parent's message ids.
    const answers = ofType(h.tap.log(childId), 'tool/result').filter((e) => e.data.name === 'report');
    expect(answers.map((e) => [e.data.isError, e.data.content])).toEqual(
      reports.map((e) => [false, `report accepted by the agent that started you as message ${e.data.id}`]),
    );
    // Host events: one subagent-report per report, on the parent, before the child's run ends.
    await childEnded.promise;
    await watching;
    const reportEvents = events.filter((e) => e.type === 'subagent-report');
    expect(reportEvents).toMatchObject(
      reports.map((e) => ({ agentId: parent.id, depth: 0, childId, messageId: e.data.id })),
    );
    const end = events.findIndex((e) => e.type === 'subagent-end' && e.childId === childId);
    expect(events.indexOf(reportEvents[1]!)).toBeLessThan(end);
  });

  it("'next-step': a running turn takes the report at its next model step, after that step's tool results", async () => {
    const released = deferred();
    const holding = deferred();
    const store = memorySessions();
    // The child reports only once the parent's turn is inside `hold`: the report must join a running step.
    const h = setup(
      [
        {
          match: 'mid task',
          turns: [
            { toolCalls: [{ name: 'await_hold', arguments: {} }] },
            reportCall('mid-turn finding'),
            { text: 'child done' },
          ],
        },
      ],
      [startCall('mid task'), { toolCalls: [{ name: 'hold', arguments: {} }] }],
      store,
    );
    h.brood.tools.register(
      defineTool({
        name: 'hold',
        description: 'Waits until the test lets go.',
        parameters: z.object({}),
        execute: async () => {
          holding.resolve();
          await released.promise;
          return 'held';
        },
      }),
    );
    h.brood.tools.register(
      defineTool({
        name: 'await_hold',
        description: 'Waits until the parent is inside hold.',
        parameters: z.object({}),
        execute: async () => {
          await holding.promise;
          return 'parent holding';
        },
      }),
    );
    h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable', agentOptions: SCRIPTED }));
    const parent = await h.brood.createAgent({ model: WITNESS });
    const run = parent.run('go');
    await h.tap.waitFor(parent.id, 'tool/result', (e) => e.data.name === 'subagent');
    const childId = startedChild(h, parent.id);
    // The parent's turn is inside `hold` while the child reports.
    await h.tap.waitFor(childId, 'tool/result', (e) => e.data.name === 'report');
    released.resolve();
    const result = await run;

    const log = h.tap.log(parent.id);
    const report = log.find(isReport);
    expect(report?.data.delivery).toBe('next-step');
    const text = reportText(childId, 'mid-turn finding');
    // Three requests in the turn: the third one carried the report.
    expect(ofType(log, 'assistant/message').slice(0, 3).map(saw)).toEqual([['go'], ['go'], ['go', text]]);
    expect(JSON.parse(result.output)).toEqual(['go', text]);
    const joins = ofType(log, 'turn/join');
    expect(joins.map((e) => e.data)).toEqual([{ turn: 1, messageIds: [report?.data.id] }]);
    const holdResult = log.findIndex((e) => e.type === 'tool/result' && e.data.name === 'hold');
    const thirdRequest = log.indexOf(ofType(log, 'model/request')[2]!);
    expect(holdResult).toBeLessThan(log.indexOf(joins[0]!));
    expect(log.indexOf(joins[0]!)).toBeLessThan(thirdRequest);
    // It was not a turn of its own.
    expect(
      ofType(log, 'turn/start').some((e) => (e.data.messageIds as string[]).includes(String(report?.data.id))),
    ).toBe(false);

    // Another runtime rebuilds the history from the log: the report is where the step took it.
    const notice = await h.tap.waitFor(parent.id, 'user/message', isNotice);
    await turnOf(h, parent.id, String(notice.data.id));
    await h.brood.close();
    const resumed = await setup([], [], store).brood.resumeAgent(parent.id);
    const after = await resumed.run('after restart');
    expect(JSON.parse(after.output)).toEqual(['go', text, notice.data.text, 'after restart']);
  });

  it("'quiet' does not wake an idle parent; the parent's next turn sees the report", async () => {
    const h = setup([{ match: 'quiet task', turns: [{ text: 'child done' }] }]);
    const parent = await h.brood.createAgent({ model: WITNESS });
    const { childId } = await startContinuable(h, parent, 'quiet task', 'quiet');
    const notice = await h.tap.waitFor(parent.id, 'user/message', isNotice);
    await turnOf(h, parent.id, String(notice.data.id));
    await parent.whenIdle();

    // The child's own default (quiet) applies.
    const messageId = await h.brood.subagents.reportFrom(childId, 'a late finding');
    expect(parent.status).toBe('idle');
    await parent.whenIdle(); // nothing that starts a turn is queued
    expect(ofType(h.tap.log(parent.id), 'turn/start')).toHaveLength(1);

    const result = await parent.run('next question');
    expect(JSON.parse(result.output)).toEqual([
      notice.data.text,
      reportText(childId, 'a late finding'),
      'next question',
    ]);
    const last = ofType(h.tap.log(parent.id), 'turn/start').at(-1);
    expect(last?.data).toMatchObject({ turn: 2, joined: [messageId] });
    expect(last?.data.messageIds).not.toContain(messageId);
  });

  it("'quiet' reports from the tool ride with the parent's next turn (the settlement notice's), ahead of it", async () => {
    const h = setup(
      [{ match: 'calm task', turns: [reportCall('calm finding'), { text: 'child done' }] }],
      [startCall('calm task')],
    );
    h.brood.use(
      subagentTool({
        provider: 'spawn',
        backgroundMode: 'continuable',
        agentOptions: SCRIPTED,
        reportDelivery: 'quiet',
      }),
    );
    const { childId, notice, log } = await delegateUntilSettled(h);
    const report = log.find(isReport);
    expect(report?.data).toMatchObject({ delivery: 'quiet', from: childId });
    const starts = ofType(log, 'turn/start');
    expect(starts.map((e) => e.data)).toEqual([
      { turn: 1, messageIds: [expect.any(String)] },
      { turn: 2, messageIds: [notice.data.id], joined: [report?.data.id] },
    ]);
    expect(saw(ofType(log, 'assistant/message').at(-1))).toEqual([
      'go',
      reportText(childId, 'calm finding'),
      notice.data.text,
    ]);
  });

  it('a child whose filter denies every tool still has report and its guidance, and can report', async () => {
    const h = setup([
      {
        match: 'boss',
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { description: 'f', prompt: 'filtered task' } }] }],
      },
      { match: 'filtered task', turns: [reportCall('found it'), { text: 'done' }] },
    ]);
    h.brood.tools.register(
      defineTool({ name: 'visible', description: 'A global tool.', parameters: z.object({}), execute: () => 'ok' }),
    );
    h.brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable', toolFilter: { allow: [] } }));
    const parent = await h.brood.createAgent({ model: SCRIPTED });
    await parent.run('boss');
    const childId = startedChild(h, parent.id);
    const request = await h.tap.waitFor(childId, 'model/request');
    expect(request.data.tools).toEqual(['report']);
    expect(request.data.system).toBe(REPORT_GUIDANCE);
    const answer = await h.tap.waitFor(childId, 'tool/result', (e) => e.data.name === 'report');
    expect(answer.data.isError).toBe(false);
    const report = await h.tap.waitFor(parent.id, 'user/message', isReport);
    expect(report.data.text).toBe(reportText(childId, 'found it'));
  });

  it('top-level agents and one-shot children (foreground and background) have no report', async () => {
    const delegate = (prompt: string, background: boolean) => ({
      toolCalls: [{ name: 'subagent', arguments: { description: prompt, prompt, run_in_background: background } }],
    });
    const h = setup([
      {
        match: 'lead',
        turns: [reportCall('x'), delegate('fg task', false), delegate('bg task', true), { text: 'lead done' }],
      },
      { match: 'fg task', turns: [reportCall('y'), { text: 'fg done' }] },
      { match: 'bg task', turns: [reportCall('z'), { text: 'bg done' }] },
    ]);
    h.brood.use(subagentTool({ provider: 'spawn' }));
    const lead = await h.brood.createAgent({ model: SCRIPTED });
    await lead.run('lead');
    const children = (await h.headers()).filter((header) => header.parentSession === lead.id);
    expect(children).toHaveLength(2);
    for (const child of children) await h.endOf(child.id);
    for (const id of [lead.id, ...children.map((child) => child.id)]) {
      const events = await h.events(id);
      const answer = ofType(events, 'tool/result').find((e) => e.data.name === 'report');
      expect(answer?.data).toMatchObject({ isError: true, errorCode: 'UNKNOWN_TOOL' });
      for (const request of ofType(events, 'model/request')) {
        expect(request.data.tools).not.toContain('report');
        expect(request.data.system).not.toContain(REPORT_GUIDANCE);
      }
    }
    expect(lead.tools.view().has('report')).toBe(false);
  });

  it('reportFrom: INVALID_ARGS, UNAUTHORIZED, ABORTED and PARENT_UNAVAILABLE (tool too), DISPOSED once closed', async () => {
    const h = setup([{ match: 'idle task', turns: [{ text: 'parked' }] }]);
    const parent = await h.brood.createAgent({ model: SCRIPTED });
    const { childId } = await startContinuable(h, parent, 'idle task');
    const notice = await h.tap.waitFor(parent.id, 'user/message', isNotice);
    await turnOf(h, parent.id, String(notice.data.id));
    const report = h.brood.subagents.reportFrom.bind(h.brood.subagents);

    await expectCode(report(childId, ''), 'INVALID_ARGS');
    await expectCode(report(childId, ' \n'), 'INVALID_ARGS');
    await expectCode(report(childId, 'x', { delivery: 'later' as never }), 'INVALID_ARGS');
    await expectCode(report('sub_nobody', 'x'), 'UNAUTHORIZED');
    await expectCode(report(parent.id, 'x'), 'UNAUTHORIZED'); // a top-level agent
    const signal = new AbortController().signal;
    const oneShot = await h.brood.subagents.start('spawn', { parent, prompt: 'one shot', signal });
    await expectCode(report(oneShot.id, 'x'), 'UNAUTHORIZED'); // live, but not continuable
    await oneShot.result;
    await oneShot.dispose();
    const aborted = new AbortController();
    aborted.abort();
    await expectCode(report(childId, 'x', { signal: aborted.signal }), 'ABORTED');
    expect(h.tap.log(parent.id).filter(isReport)).toHaveLength(0);

    await parent.dispose();
    await expectCode(report(childId, 'x'), 'PARENT_UNAVAILABLE');
    // The child's own tool says the same (resumeAgent hands back the live child).
    const child = await h.brood.resumeAgent(childId);
    const answer = await child.tools.execute({ name: 'report', arguments: { output: 'x' } });
    expect(answer.error?.code).toBe('PARENT_UNAVAILABLE');
    await h.brood.close();
    await expectCode(report(childId, 'x'), 'DISPOSED');
  });

  it('a report is durable in the parent session: it survives restarts on fileSessions and brood inspect lists it under the child', async () => {
    assertBuilt();
    const dir = await mkdtemp(join(tmpdir(), 'brood-report-'));
    dirs.push(dir);
    const build = (): Harness =>
      setup([{ match: 'durable task', turns: [{ text: 'child done' }] }], [], fileSessions(dir));
    const first = build();
    const parent = await first.brood.createAgent({ model: WITNESS });
    const { childId } = await startContinuable(first, parent, 'durable task');
    const notice = await first.tap.waitFor(parent.id, 'user/message', isNotice);
    await turnOf(first, parent.id, String(notice.data.id));
    await parent.whenIdle();
    const messageId = await first.brood.subagents.reportFrom(childId, 'persisted finding', { delivery: 'quiet' });
    await first.brood.close();

    const text = reportText(childId, 'persisted finding');
    const second = build();
    const resumed = await second.brood.resumeAgent(parent.id);
    const result = await resumed.run('after restart');
    expect(JSON.parse(result.output)).toEqual([notice.data.text, text, 'after restart']);
    expect(ofType(await second.events(parent.id), 'turn/start').at(-1)?.data).toMatchObject({ joined: [messageId] });
    await second.brood.close();

    // Taken once: after another restart it is history, in its place, and not taken again.
    const third = build();
    const again = await (await third.brood.resumeAgent(parent.id)).run('again');
    expect(JSON.parse(again.output)).toEqual([notice.data.text, text, 'after restart', 'again']);
    await third.brood.close();

    const inspected = await runCli(['inspect', dir]);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain(`  ${childId} reported (${messageId}): persisted finding\n`);
    const rows = JSON.parse((await runCli(['inspect', dir, '--json'])).stdout) as {
      id: string;
      reports: { messageId: string; output: string }[];
    }[];
    expect(rows.find((row) => row.id === childId)?.reports).toMatchObject([{ messageId, output: 'persisted finding' }]);
    expect(rows.find((row) => row.id === parent.id)?.reports).toEqual([]);
  });
});
