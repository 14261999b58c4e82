/** SPEC §11.6 runtime side: the job table (ids, statuses, owner notices, ownership, owner disposal). */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, SubagentRun } from '../../../src/index.js';
import { pluginAccess } from '../../../src/runtime/plugin-access.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { type Harness, harness, nth, type Script } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.brood.close();
  h = undefined;
});

const SCRIPTS: Script[] = [
  {
    match: 'owner',
    turns: [{ text: 'owner idle' }, { text: 'owner woken' }, { text: 'owner woken 2' }, { text: 'owner woken 3' }],
  },
  { match: 'job ok', turns: [{ text: 'job output' }] },
  { match: 'job slow', latencyMs: 60_000, turns: [{ text: 'never' }] },
  { match: 'job fail', turns: [{ finish: 'error' }] },
];

const isJobNotice = (e: { data: Record<string, unknown> }): boolean => e.data.source === 'job-completed';
const noticeFor = (id: string, label: string, status: string): string =>
  `background job ${id} (subagent: ${label}) finished [status: ${status}]. Read its output with job_output.`;

async function startJob(owner: Agent, prompt: string, label: string) {
  const controller = new AbortController();
  const run: SubagentRun = await h!.brood.subagents.start('spawn', {
    parent: owner,
    prompt,
    signal: controller.signal,
    label,
  });
  return { run, job: pluginAccess(h!.brood).jobs.create(owner, run, label, controller) };
}

describe('background jobs', () => {
  it('unique ids; running → completed / killed / failed; one exact notice per job wakes the idle owner', async () => {
    h = harness({ scripts: SCRIPTS });
    const jobs = pluginAccess(h.brood).jobs;
    const owner = await h.brood.createAgent({ model: route });
    await owner.run('owner hello');

    const ok = await startJob(owner, 'job ok', 'ok-label');
    const slow = await startJob(owner, 'job slow', 'slow-label');
    const fail = await startJob(owner, 'job fail', 'fail-label');
    expect(new Set([ok.job.id, slow.job.id, fail.job.id]).size).toBe(3);
    expect(slow.job.status).toBe('running');
    expect(jobs.list(owner).map((j) => j.id)).toEqual([ok.job.id, slow.job.id, fail.job.id]);

    await Promise.all([ok.job.done, fail.job.done]);
    expect([ok.job.status, fail.job.status]).toEqual(['completed', 'failed']);
    expect(ok.job.result).toMatchObject({ stopReason: 'completed', output: 'job output' });
    expect(fail.job.result?.stopReason).toBe('error');

    await h.tap.waitFor(slow.run.id, 'model/request');
    expect(jobs.kill(owner, slow.job.id)).toBe(true);
    expect(slow.job.status).toBe('stopping');
    await slow.job.done;
    expect(slow.job.status).toBe('killed');
    expect(jobs.kill(owner, slow.job.id)).toBe(false);

    await nth(h, owner.id, 'user/message', 3, isJobNotice);
    const notices = ofType(await h.events(owner.id), 'user/message')
      .filter(isJobNotice)
      .map((e) => String(e.data.text));
    expect([...notices].sort()).toEqual(
      [
        noticeFor(ok.job.id, 'ok-label', 'completed'),
        noticeFor(slow.job.id, 'slow-label', 'killed'),
        noticeFor(fail.job.id, 'fail-label', 'failed'),
      ].sort(),
    );
    // The idle owner was woken by a notice and its script answered.
    const woken = await h.tap.waitFor(owner.id, 'turn/end', (e) => e.data.turn === 2);
    expect(woken.data.reason).toBe('completed');
    expect(ofType(await h.events(owner.id), 'assistant/message')[1]?.data.text).toBe('owner woken');
    // The notice does not consume the output; the job keeps its result.
    expect(ok.job.result?.output).toBe('job output');
  });

  it("another owner's job is invisible", async () => {
    h = harness({ scripts: SCRIPTS });
    const jobs = pluginAccess(h.brood).jobs;
    const owner = await h.brood.createAgent({ model: route });
    const other = await h.brood.createAgent({ model: route });
    const { job } = await startJob(owner, 'job ok', 'mine');
    expect(jobs.get(owner, job.id)).toBe(job);
    expect(jobs.get(other, job.id)).toBeUndefined();
    expect(jobs.get(owner, 'job_nope')).toBeUndefined();
    expect(jobs.list(other)).toEqual([]);
    expect(jobs.kill(other, job.id)).toBe(false);
    await job.done;
    expect(job.status).toBe('completed');
  });

  it("a job started inside the owner's turn is detached: its usage is not rolled into that turn", async () => {
    h = harness({
      scripts: [
        { match: 'owner go', turns: [{ toolCalls: [{ name: 'bg', arguments: {} }] }, { text: 'owner done' }] },
        ...SCRIPTS,
      ],
    });
    const { defineTool } = await import('../../../src/index.js');
    let childId = '';
    h.brood.tools.register(
      defineTool({
        name: 'bg',
        description: 'starts a job and waits for it (so a non-detached run would be rolled up)',
        parameters: { type: 'object', properties: {} },
        execute: async (_args, ctx) => {
          const started = await startJob(ctx.agent!, 'job ok', 'bg');
          childId = started.run.id;
          await started.job.done;
          return started.job.status;
        },
      }),
    );
    const owner = await h.brood.createAgent({ model: route });
    const turn = await owner.run('owner go');
    const turnEvents = (await h.events(owner.id)).filter((e) => e.type === 'assistant/message').slice(0, 2);
    const own = turnEvents.reduce(
      (n, e) => n + ((e.data.usage as { inputTokens: number } | undefined)?.inputTokens ?? 0),
      0,
    );
    const child = ofType(await h.events(childId), 'assistant/message').reduce(
      (n, e) => n + ((e.data.usage as { inputTokens: number } | undefined)?.inputTokens ?? 0),
      0,
    );
    expect(child).toBeGreaterThan(0);
    expect(turn.output).toBe('owner done');
    expect(turn.usage.inputTokens).toBe(own);
  });

  it("disposing the owner cancels its running jobs (and not other owners' jobs)", async () => {
    h = harness({ scripts: SCRIPTS });
    const owner = await h.brood.createAgent({ model: route });
    const other = await h.brood.createAgent({ model: route });
    const mine = await startJob(owner, 'job slow', 'mine');
    const theirs = await startJob(other, 'job slow', 'theirs');
    await Promise.all([h.tap.waitFor(mine.run.id, 'model/request'), h.tap.waitFor(theirs.run.id, 'model/request')]);
    await owner.dispose();
    await mine.job.done;
    expect(mine.job.status).toBe('killed');
    expect((await h.endOf(mine.run.id)).stopReason).toBe('aborted');
    expect(theirs.job.status).toBe('running');
    expect(pluginAccess(h.brood).jobs.kill(other, theirs.job.id)).toBe(true);
    await theirs.job.done;
    expect(theirs.job.status).toBe('killed');
  });

  it('an id adopted after a restart is its owner’s own: two owners may each have their job_1', async () => {
    h = harness({ scripts: SCRIPTS });
    const jobs = pluginAccess(h.brood).jobs;
    const [first, second] = [await h.brood.createAgent({ model: route }), await h.brood.createAgent({ model: route })];
    const done = {
      id: 'run',
      result: Promise.resolve({
        output: 'x',
        stopReason: 'completed' as const,
        usage: { inputTokens: 0, outputTokens: 0 },
      }),
      dispose: () => Promise.resolve(),
    };
    const adopted = [first, second].map((owner) =>
      jobs.create(owner, done, 'label', new AbortController(), { id: 'job_1', notifyOwner: false }),
    );
    expect(adopted.map((job) => job.id)).toEqual(['job_1', 'job_1']);
    expect(jobs.get(first, 'job_1')).toBe(adopted[0]);
    expect(jobs.get(second, 'job_1')).toBe(adopted[1]);
    // A fresh id never repeats an adopted one.
    expect(jobs.create(first, done, 'label', new AbortController(), { notifyOwner: false }).id).toBe('job_2');
  });
});
