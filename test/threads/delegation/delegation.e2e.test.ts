/** SPEC §11.3–§11.7, §11.11, §11.12 end to end: real runtime, scripted models, worker threads. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/brood.js';
import { jobTools, messageTools, subagentTool } from '../../../src/delegation/index.js';
import { scriptedModels } from '../../../src/models/scripted.js';
import { eventsOf, ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { behaviourBrood } from '../../support/runtime.js';
import { waitForEvents } from './helpers.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const call = (prompt: string, extra: Record<string, unknown> = {}) => ({
  name: 'subagent',
  arguments: { description: `task ${prompt}`, prompt, ...extra },
});

describe('foreground', () => {
  it('fans out 5 siblings in one assistant message: results in model order, at most maxParallelToolCalls at once', async () => {
    brood = behaviourBrood({
      maxParallelToolCalls: 2,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'fan out',
              turns: [{ toolCalls: [1, 2, 3, 4, 5].map((n) => call(`child ${n}`)) }, { text: '{{results}}' }],
            },
            // Later siblings finish first, so commit order is not finish order.
            ...[1, 2, 3, 4, 5].map((n) => ({
              match: `child ${n}`,
              latencyMs: 120 - n * 20,
              turns: [{ text: 'done {{prompt}}' }],
            })),
          ],
        }),
      ],
    });
    brood.use(subagentTool({ provider: 'spawn' }));
    let running = 0;
    let max = 0;
    brood.subagents.on('start', () => (max = Math.max(max, ++running)));
    brood.subagents.on('end', () => running--);
    const parent = await brood.createAgent({ model: route });
    const result = await parent.run('fan out');
    expect(result.stopReason).toBe('completed');
    expect(result.output).toBe([1, 2, 3, 4, 5].map((n) => `done child ${n}`).join('\n'));
    expect(max).toBe(2);
    const results = ofType(await eventsOf(brood, parent.id), 'tool/result').map((e) => e.data.content);
    expect(results).toEqual([1, 2, 3, 4, 5].map((n) => `done child ${n}`));
  });

  it('returns the canonical value rendered as the final text, with the child session id as runId', async () => {
    brood = behaviourBrood();
    brood.use(subagentTool({ provider: 'spawn' }));
    const parent = await brood.createAgent({ model: route });
    const result = await parent.tools.execute(call('hello child'));
    expect(result.isError).toBe(false);
    expect(result.content).toBe('hello child');
    const value = result.value as { kind: string; runId: string; output: unknown };
    expect(value).toEqual({
      kind: 'foreground',
      runId: expect.any(String),
      output: [{ type: 'text', text: 'hello child' }],
    });
    const header = (await brood.sessions.read(value.runId)).header;
    expect(header).toMatchObject({ parentSession: parent.id, origin: 'subagent', delegationDepth: 1 });
  });

  it.each([
    [
      'max-tokens',
      { finish: 'max-tokens' as const, text: 'half' },
      'Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\nhalf',
    ],
    ['refusal', { finish: 'refusal' as const }, 'Error: subagent declined the task'],
  ])('renders a %s child as an errored result with no code', async (_label, turn, content) => {
    brood = behaviourBrood({
      models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'bad', turns: [turn] }] })],
    });
    brood.use(subagentTool({ provider: 'spawn' }));
    const parent = await brood.createAgent({ model: route });
    const result = await parent.tools.execute(call('bad'));
    expect(result.isError).toBe(true);
    expect(result.content).toBe(content);
    expect(result.error?.code).toBeUndefined();
  });

  it('a cancelled child yields ABORTED', async () => {
    brood = behaviourBrood({
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'slow', latencyMs: 5_000, turns: [{ text: 'late' }] }] }),
      ],
    });
    brood.use(subagentTool({ provider: 'spawn' }));
    const parent = await brood.createAgent({ model: route });
    const controller = new AbortController();
    const pending = parent.tools.execute({ ...call('slow'), signal: controller.signal });
    await new Promise<void>((resolve) => brood!.subagents.on('start', () => resolve()));
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ isError: true, error: { code: 'ABORTED' } });
    expect(result.content).toMatch(/^Error: subagent run was cancelled/);
  });

  it('without a calling agent the call is SCOPE_REQUIRED; forced disabled fields are INVALID_ARGS', async () => {
    brood = behaviourBrood();
    brood.use(subagentTool({ provider: 'spawn', enableRunInBackground: false }));
    expect((await brood.tools.execute(call('x'))).error?.code).toBe('SCOPE_REQUIRED');
    const parent = await brood.createAgent({ model: route });
    const forced = await parent.tools.execute(call('x', { run_in_background: true }));
    expect(forced).toMatchObject({
      isError: true,
      content: 'Error: run_in_background is disabled for this tool instance',
      error: { code: 'INVALID_ARGS' },
    });
    const selection = await parent.tools.execute(call('x', { provider: 'scripted', model: 'scripted' }));
    expect(selection).toMatchObject({ isError: true, error: { code: 'INVALID_ARGS' } });
    expect((await brood.sessions.list()).filter((h) => h.origin === 'subagent')).toHaveLength(0);
  });
});

describe('depth', () => {
  it('a chain trying depth 4 under maxDepth 3 gets DEPTH_EXCEEDED and no depth-4 session exists', async () => {
    brood = behaviourBrood({
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'chain', turns: [{ toolCalls: [call('chain')] }, { text: '{{results}}' }] }],
        }),
      ],
    });
    brood.use(subagentTool({ provider: 'spawn', maxDepth: 3 }));
    const parent = await brood.createAgent({ model: route });
    const result = await parent.run('chain');
    expect(result.output).toBe('Error: subagent depth 4 exceeds maxDepth 3');
    const headers = await brood.sessions.list();
    expect(Math.max(...headers.map((h) => h.delegationDepth))).toBe(3);
    const deepest = headers.find((h) => h.delegationDepth === 3)!;
    const [rejected] = ofType(await eventsOf(brood, deepest.id), 'tool/result');
    expect(rejected?.data).toMatchObject({
      isError: true,
      content: 'Error: subagent depth 4 exceeds maxDepth 3',
      errorCode: 'DEPTH_EXCEEDED',
    });
  });

  it('maxDepth 0 forbids delegation (background too), with no job created', async () => {
    brood = behaviourBrood();
    brood.use(subagentTool({ provider: 'spawn', maxDepth: 0 }));
    const parent = await brood.createAgent({ model: route });
    for (const extra of [{}, { run_in_background: true }]) {
      const result = await parent.tools.execute(call('x', extra));
      expect(result).toMatchObject({
        isError: true,
        content: 'Error: subagent depth 1 exceeds maxDepth 0',
        error: { code: 'DEPTH_EXCEEDED' },
      });
    }
    expect((await parent.tools.execute({ name: 'job_list', arguments: {} })).content).toBe('(no background jobs)');
  });
});

describe('one-shot background', () => {
  it('starts a job, collects it with job_output, lists it; another agent sees it as unknown', async () => {
    brood = behaviourBrood({
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'bg parent',
              turns: [
                { toolCalls: [call('bg child', { run_in_background: true })] },
                { toolCalls: [{ name: 'job_output', arguments: { job_id: 'job_1', wait: true } }] },
                { text: '{{results}}' },
              ],
            },
            { match: 'bg child', latencyMs: 50, turns: [{ text: 'background result' }] },
          ],
        }),
      ],
    });
    brood.use(subagentTool({ provider: 'spawn' }));
    brood.use(jobTools());
    const parent = await brood.createAgent({ model: route });
    const result = await parent.run('bg parent');
    expect(result.output).toBe('background result\n[status: completed]');
    const [started] = ofType(await eventsOf(brood, parent.id), 'tool/result');
    expect(started?.data.content).toBe('started background subagent job job_1');
    const again = await parent.tools.execute({ name: 'job_output', arguments: { job_id: 'job_1' } });
    expect(again.content).toBe('background result\n[status: completed]');
    expect((await parent.tools.execute({ name: 'job_list', arguments: {} })).content).toBe(
      'job_1 [subagent] completed — task bg child',
    );
    expect((await parent.tools.execute({ name: 'job_kill', arguments: { job_id: 'job_1' } })).content).toBe(
      'job job_1 had already finished [status: completed]',
    );
    const notice = await waitForEvents(
      brood,
      parent.id,
      (e) => e.type === 'user/message' && e.data.source === 'job-completed',
    );
    expect(notice[0]?.data.text).toBe(
      'background job job_1 (subagent: task bg child) finished [status: completed]. Read its output with job_output.',
    );
    const stranger = await brood.createAgent({ model: route });
    const unknown = await stranger.tools.execute({ name: 'job_output', arguments: { job_id: 'job_1' } });
    expect(unknown).toMatchObject({
      isError: true,
      content: 'Error: unknown job job_1',
      error: { code: 'INVALID_ARGS' },
    });
  });

  it('job_output without wait reads (no new output) while running; job_kill cancels; wait leaves a job alive', async () => {
    brood = behaviourBrood({
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'long', latencyMs: 10_000, turns: [{ text: 'never' }] }] }),
      ],
    });
    brood.use(subagentTool({ provider: 'spawn' }));
    const parent = await brood.createAgent({ model: route });
    const started = await parent.tools.execute(call('long', { run_in_background: true }));
    expect(started.value).toEqual({ kind: 'background', jobId: 'job_1' });
    expect((await parent.tools.execute({ name: 'job_output', arguments: { job_id: 'job_1' } })).content).toBe(
      '(no new output)\n[status: running]',
    );
    const waited = await parent.tools.execute({
      name: 'job_output',
      arguments: { job_id: 'job_1', wait: true, timeout_ms: 30 },
    });
    expect(waited.content).toBe('(no new output)\n[status: running]');
    expect((await parent.tools.execute({ name: 'job_kill', arguments: { job_id: 'job_1' } })).content).toBe(
      'requested cancellation of job job_1',
    );
    const finished = await parent.tools.execute({ name: 'job_output', arguments: { job_id: 'job_1', wait: true } });
    expect(finished.content).toBe('(no output)\n[status: killed]');
  });
});

describe('continuable', () => {
  it('starts a child, messages it twice with send_message, and the idle parent receives each settlement notice', async () => {
    brood = behaviourBrood({
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'boss',
              turns: [
                { toolCalls: [call('worker child')] },
                { text: 'delegated' },
                { text: 'noted' },
                { text: 'noted' },
                { text: 'noted' },
              ],
            },
            { match: 'worker child', turns: [{ text: 'first pass' }, { text: 'second pass' }, { text: 'third pass' }] },
          ],
        }),
      ],
    });
    brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable' }));
    brood.use(messageTools());
    const parent = await brood.createAgent({ model: route });
    expect(parent.prompt.assemble().sections.map((s) => s.name)).toContain('tool:subagent');
    const result = await parent.run('boss');
    expect(result.output).toBe('delegated');
    const [started] = ofType(await eventsOf(brood, parent.id), 'tool/result');
    const childId = /^started subagent (\S+)$/.exec(String(started?.data.content))?.[1];
    expect(childId).toBeDefined();
    const settled = (n: number) =>
      waitForEvents(brood!, parent.id, (e) => e.type === 'user/message' && e.data.source === 'subagent-settled', n);
    const [first] = await settled(1);
    expect(first?.data.text).toBe(
      `Background subagent ${childId} finished and will do no further work unless you send it more.\nIts closing message:\nfirst pass`,
    );
    for (const [n, text] of [
      [2, 'second pass'],
      [3, 'third pass'],
    ] as const) {
      await parent.whenIdle();
      const sent = await parent.tools.execute({
        name: 'send_message',
        arguments: { subagent_id: childId, message: `more ${n}` },
      });
      expect(sent.content).toBe(`message queued as the next turn for subagent ${childId}`);
      const notices = await settled(n);
      expect(notices[n - 1]?.data.text).toMatch(new RegExp(`Its closing message:\\n${text}$`));
    }
    const childMessages = ofType(await eventsOf(brood, childId!), 'user/message').map((e) => e.data.text);
    expect(childMessages).toEqual(['worker child', 'more 2', 'more 3']);
  });

  it('send_message errors keep their code (NOT_RESUMABLE, UNAUTHORIZED)', async () => {
    brood = behaviourBrood();
    brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable' }));
    brood.use(messageTools());
    const parent = await brood.createAgent({ model: route });
    const stranger = await brood.createAgent({ model: route });
    const unknown = await parent.tools.execute({
      name: 'send_message',
      arguments: { subagent_id: 'nope', message: 'hi' },
    });
    expect(unknown.error?.code).toBe('NOT_RESUMABLE');
    const started = await parent.tools.execute(call('quiet child'));
    const { subagentId } = started.value as { subagentId: string };
    expect(started.content).toBe(`started subagent ${subagentId}`);
    const foreign = await stranger.tools.execute({
      name: 'send_message',
      arguments: { subagent_id: subagentId, message: 'hi' },
    });
    expect(foreign.error?.code).toBe('UNAUTHORIZED');
    // An explicit false runs in the foreground even in continuable mode.
    const fg = await parent.tools.execute(call('fg child', { run_in_background: false }));
    expect(fg.value).toMatchObject({ kind: 'foreground' });
  });
});
