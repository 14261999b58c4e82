/**
 * acpProvider against a minimal ACP agent written with the SDK's agent side (a real child process):
 * the recorded transcript, stop reasons, one multiplexed process, cancellation, and every way the
 * process can fail — none of which may reach the host as anything but an errored child.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BroodEvent } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { eventsOf } from '../../support/events.js';
import { isRunning, processExists } from '../../support/running.js';
import { until } from '../../support/until.js';
import { type AcpHarness, acpHarness, agentPid, FIXTURE_AGENT, fixtureOptions, signal } from './helpers.js';

let h: AcpHarness | undefined;
let marks: string;
beforeAll(async () => {
  marks = await mkdtemp(join(tmpdir(), 'brood-acp-marks-'));
});
afterAll(async () => {
  await rm(marks, { recursive: true, force: true });
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Resolves once the fixture wrote a new `<scenario>-<n>` marker: the prompt is in flight. */
async function midPrompt(scenario: string, seen: number): Promise<void> {
  await until(async () => (await readdir(marks)).filter((name) => name.startsWith(`${scenario}-`)).length > seen);
}

const startOn = (harness: AcpHarness, prompt: string, abort = signal()) =>
  harness.brood.subagents.start('acp', { parent: harness.lead, prompt, signal: abort });
const start = (prompt: string, abort = signal()) => startOn(h!, prompt, abort);

/**
 * One runtime and agent process for the cases that only start children and read what those recorded
 * (one process serving every session is the design); cases about the process's life get their own.
 */
let recorder: AcpHarness | undefined;
const recording = async (): Promise<AcpHarness> => {
  recorder ??= await acpHarness(fixtureOptions());
  return recorder;
};
afterAll(async () => {
  await recorder?.close();
});

describe('acpProvider: the child session records what the agent reports', () => {
  it('prompts with the task text; header, turn, text and usage are recorded like any child', async () => {
    const r = await recording();
    const run = await startOn(r, 'hello there');
    const result = await run.result;
    expect(result).toMatchObject({
      stopReason: 'completed',
      output: 'echo: hello there',
      usage: { inputTokens: 11, outputTokens: 7 },
    });
    const { header, events } = await r.brood.sessions.read(run.id);
    expect(header).toMatchObject({ parentSession: r.lead.id, origin: 'subagent', delegationDepth: 1 });
    expect(events.map((e) => e.type)).toEqual([
      'subagent/descriptor',
      'user/message',
      'turn/start',
      'assistant/message',
      'turn/end',
    ]);
    expect(events[0]!.data).toMatchObject({
      provider: 'acp',
      mode: 'one-shot',
      runner: 'external',
      acp: { agent: { name: 'fixture-agent', version: '1.0.0' } },
    });
    expect(events[1]!.data).toMatchObject({ text: 'hello there', source: 'parent' });
    expect(events[3]!.data).toMatchObject({
      text: 'echo: hello there',
      finish: 'stop',
      usage: { inputTokens: 11, outputTokens: 7 },
    });
    expect(events[4]!.data).toMatchObject({ reason: 'completed' });
    await run.dispose();
  });

  it('tool calls become tool/call + tool/result (failed ones errored, unfinished ones closed); thoughts and plans are kept', async () => {
    const r = await recording();
    const tools = await startOn(r, 'tools');
    expect(await tools.result).toMatchObject({
      stopReason: 'completed',
      output: 'Done with tools.',
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    const events = (await eventsOf(r.brood, tools.id)).filter(
      (e) => e.type.startsWith('tool/') || e.type === 'assistant/message',
    );
    expect(events.map((e) => [e.type, e.data.callId ?? e.data.text])).toEqual([
      ['assistant/message', 'Reading the file.'],
      ['tool/call', 'call-1'],
      ['tool/result', 'call-1'],
      ['assistant/message', ''],
      ['tool/call', 'call-2'],
      ['tool/result', 'call-2'],
      ['assistant/message', ''],
      ['tool/call', 'call-3'],
      ['tool/result', 'call-3'],
      ['assistant/message', 'Done with tools.'],
    ]);
    expect(events[1]!.data).toMatchObject({ name: 'Read notes.txt', arguments: '{"path":"notes.txt"}', kind: 'read' });
    expect(events[2]!.data).toMatchObject({ isError: false, content: 'the notes' });
    expect(events[5]!.data).toMatchObject({ isError: true, content: '{"exitCode":1}' });
    expect(events[8]!.data).toMatchObject({
      isError: true,
      content: 'Error: the agent reported no outcome for this tool call',
    });

    const think = await startOn(r, 'think');
    expect((await think.result).output).toBe('thought it through');
    const extra = (await eventsOf(r.brood, think.id)).filter((e) => e.type.startsWith('acp/'));
    expect(extra.map((e) => [e.type, e.data])).toEqual([
      ['acp/thought', { text: 'let me think' }],
      ['acp/plan', { entries: [{ content: 'step one', priority: 'high', status: 'in_progress' }] }],
    ]);
  });

  it('maps stop reasons: max_tokens, refusal, max_turn_requests (max-steps), cancelled', async () => {
    const r = await recording();
    const results = await Promise.all(
      ['stop:max_tokens', 'stop:refusal', 'stop:max_turn_requests', 'stop:cancelled'].map(
        async (p) => (await startOn(r, p)).result,
      ),
    );
    expect(results.map((r) => r.stopReason)).toEqual(['max-tokens', 'refusal', 'max-steps', 'aborted']);
    expect(results[0]!.output).toBe('stopping with max_tokens');
    expect(results[2]!.diagnostic).toMatch(/max_turn_requests/);
  });
});

describe('acpProvider: host events', () => {
  it('an ACP child streams like any child: turn-start, text deltas, assistant-message, turn-end, inside subagent-start/-end on the parent', async () => {
    const r = await recording();
    const controller = new AbortController();
    const seen: BroodEvent[] = [];
    const collected = (async () => {
      for await (const event of r.brood.events({ signal: controller.signal })) seen.push(event);
    })();
    const run = await startOn(r, 'hello there');
    await run.result;
    await until(() => seen.some((e) => e.type === 'subagent-end'));
    controller.abort();
    await collected;
    const child = seen
      .filter((e) => e.agentId === run.id)
      .map((e) => (e.type === 'text-delta' ? `delta:${e.delta}` : e.type));
    expect(child).toEqual(['turn-start', 'delta:echo: ', 'delta:hello there', 'assistant-message', 'turn-end']);
    const lead = seen.filter((e) => e.agentId === r.lead.id).map((e) => e.type);
    expect(lead).toEqual(['subagent-start', 'subagent-end']);
    expect(seen.find((e) => e.type === 'subagent-start')).toMatchObject({ childId: run.id, provider: 'acp' });
  });
});

describe('acpProvider: one agent process, sessions multiplexed on it', () => {
  it('parallel children share the process; brood.close() ends it', async () => {
    h = await acpHarness(fixtureOptions());
    const runs = await Promise.all(['count a', 'count b', 'count c'].map((p) => start(p)));
    const outputs = (await Promise.all(runs.map((r) => r.result))).map((r) => r.output);
    const pids = await Promise.all(runs.map((r) => agentPid(h!.brood, r.id)));
    expect(new Set(pids).size).toBe(1);
    expect(new Set(outputs.map((o) => /session (\S+)/.exec(o)![1])).size).toBe(3); // one ACP session per child
    expect(processExists(pids[0]!)).toBe(true);
    await h.close();
    h = undefined;
    expect(processExists(pids[0]!)).toBe(false);
  });

  it('disposing the registration ends the process; a later start fails NO_PROVIDER, nothing else is touched', async () => {
    h = await acpHarness(fixtureOptions(), { providers: [] });
    const run = await start('count');
    await run.result;
    const pid = await agentPid(h.brood, run.id);
    const provider = h.brood.subagents.get('acp')!;
    const { acpProvider } = await import('../../../src/index.js');
    const second = acpProvider({ ...fixtureOptions(), name: 'acp2' });
    const unregister = h.brood.subagents.register(second);
    const other = await h.brood.subagents.start('acp2', { parent: h.lead, prompt: 'count', signal: signal() });
    await other.result;
    const otherPid = await agentPid(h.brood, other.id);
    unregister();
    await until(() => !processExists(otherPid));
    expect(processExists(pid)).toBe(true); // the first provider's process is its own
    await expectCode(h.brood.subagents.start('acp2', { parent: h.lead, prompt: 'x', signal: signal() }), 'NO_PROVIDER');
    await (provider as { dispose(): Promise<void> }).dispose();
    expect(processExists(pid)).toBe(false);
  });
});

describe('acpProvider: an agent behind a wrapper', () => {
  it('`sh -c` starting an agent that ignores SIGTERM and EOF: brood.close() leaves neither running', async () => {
    h = await acpHarness({
      command: 'sh',
      args: ['-c', `"${process.execPath}" "${FIXTURE_AGENT}"`],
      env: { FIXTURE_STUBBORN: '1' },
    });
    const run = await start('count');
    const output = (await run.result).output;
    const agent = Number(/\(pid (\d+)\)/.exec(output)?.[1]);
    const wrapper = await agentPid(h.brood, run.id);
    expect(agent).not.toBe(wrapper); // really a grandchild: the shell did not exec the agent
    try {
      expect(isRunning(agent)).toBe(true);
      await h.close();
      h = undefined;
      expect(isRunning(agent)).toBe(false);
      expect(isRunning(wrapper)).toBe(false);
    } finally {
      if (isRunning(agent)) process.kill(agent, 'SIGKILL');
    }
  });
});

describe('acpProvider: cancellation', () => {
  it('abort sends session/cancel; the agent answers cancelled; the run ends aborted and the process keeps serving', async () => {
    // A grace no loaded machine runs out of: this test is about the agent answering, not the kill.
    h = await acpHarness(fixtureOptions({ env: { FIXTURE_MARKS: marks } }), {
      pool: { threads: 1, cancelGraceMs: 30_000 },
    });
    const controller = new AbortController();
    const seen = (await readdir(marks)).filter((n) => n.startsWith('hang-')).length;
    const run = await start('hang', controller.signal);
    await midPrompt('hang', seen);
    controller.abort();
    const result = await run.result;
    expect(result.stopReason).toBe('aborted');
    const pid = await agentPid(h.brood, run.id);
    expect(processExists(pid)).toBe(true);
    const next = await start('count');
    expect((await next.result).stopReason).toBe('completed');
    expect(await agentPid(h.brood, next.id)).toBe(pid);
    const end = (await eventsOf(h.brood, run.id)).find((e) => e.type === 'turn/end');
    expect(end?.data.reason).toBe('aborted');
  });

  it('an agent ignoring session/cancel past the grace is killed: that child aborted, siblings PROVIDER_FAILED, next start on a new process', async () => {
    h = await acpHarness(fixtureOptions({ env: { FIXTURE_MARKS: marks } }), {
      pool: { threads: 1, cancelGraceMs: 200 },
    });
    const controller = new AbortController();
    const seenHang = (await readdir(marks)).filter((n) => n.startsWith('hang-')).length;
    const seenIgnore = (await readdir(marks)).filter((n) => n.startsWith('ignore-cancel-')).length;
    const sibling = await start('hang');
    const stubborn = await start('ignore-cancel', controller.signal);
    await midPrompt('hang', seenHang);
    await midPrompt('ignore-cancel', seenIgnore);
    const pid = await agentPid(h.brood, stubborn.id);
    controller.abort();
    const [stubbornResult, siblingResult] = await Promise.all([stubborn.result, sibling.result]);
    expect(stubbornResult.stopReason).toBe('aborted');
    expect(stubbornResult.diagnostic).toMatch(/stopped by force/);
    expect(siblingResult.stopReason).toBe('error');
    expect(siblingResult.diagnostic).toMatch(/^PROVIDER_FAILED: .*was stopped: child \S+ ignored its cancellation/);
    await until(() => !processExists(pid));
    const next = await start('count');
    expect((await next.result).stopReason).toBe('completed');
    expect(await agentPid(h.brood, next.id)).not.toBe(pid);
  });
});

describe('acpProvider: the agent process failing', () => {
  it('an exit mid-prompt ends the child error with PROVIDER_FAILED, exit code and last stderr lines; other providers and the next start are fine', async () => {
    h = await acpHarness(fixtureOptions({ env: { FIXTURE_STDERR: 'fixture: booted' } }), {
      providers: [(await import('../../../src/index.js')).spawnProvider()],
    });
    const crashing = await start('exit');
    const local = await h.brood.subagents.start('spawn', { parent: h.lead, prompt: 'local work', signal: signal() });
    const result = await crashing.result;
    expect(result.stopReason).toBe('error');
    expect(result.diagnostic).toMatch(
      /^PROVIDER_FAILED: ACP agent 'acp' \(pid \d+\) exited with code 3; last stderr lines:\n {2}fixture: booted\n {2}fixture: something went wrong\n {2}fixture: exiting with 3$/,
    );
    expect((await local.result).stopReason).toBe('completed');
    const next = await start('count');
    expect((await next.result).output).toMatch(/^prompt #1 /);
    expect(await agentPid(h.brood, next.id)).not.toBe(await agentPid(h.brood, crashing.id));
  });

  it('a process killed mid-prompt: PROVIDER_FAILED naming the signal', async () => {
    h = await acpHarness(fixtureOptions({ env: { FIXTURE_MARKS: marks } }));
    const seen = (await readdir(marks)).filter((n) => n.startsWith('hang-')).length;
    const run = await start('hang');
    await midPrompt('hang', seen);
    process.kill(await agentPid(h.brood, run.id), 'SIGKILL');
    const result = await run.result;
    expect(result).toMatchObject({ stopReason: 'error' });
    expect(result.diagnostic).toMatch(/^PROVIDER_FAILED: ACP agent 'acp' \(pid \d+\) was killed by signal SIGKILL/);
    expect((await (await start('again')).result).output).toBe('echo: again');
  });

  it('a process that cannot start, a wrong protocol version, a silent initialize: start rejects PROVIDER_FAILED and creates nothing', async () => {
    h = await acpHarness({ command: join(marks, 'no-such-agent') });
    await expectCode(start('x'), 'PROVIDER_FAILED');
    await h.close();
    h = await acpHarness(fixtureOptions({ env: { FIXTURE_PROTOCOL_VERSION: '99' } }));
    const wrongVersion = await start('x').catch((error: unknown) => error as Error & { code: string });
    expect(wrongVersion).toMatchObject({
      code: 'PROVIDER_FAILED',
      message: expect.stringMatching(/protocol version 99; brood speaks 1/),
    });
    await h.close();
    h = await acpHarness(fixtureOptions({ timeoutMs: 150, env: { FIXTURE_INIT_DELAY_MS: '60000' } }));
    const silent = await start('x').catch((error: unknown) => error as Error & { code: string });
    expect(silent).toMatchObject({
      code: 'PROVIDER_FAILED',
      message: expect.stringMatching(/did not answer initialize within 150 ms/),
    });
    expect((await h.brood.sessions.list()).map((s) => s.id)).toEqual([h.lead.id]);
  });

  it('garbage on stdout or a response to an unknown id: an errored child, the process stopped, the host unaffected', async () => {
    h = await acpHarness(fixtureOptions());
    for (const [prompt, reason] of [
      ['garbage', /broke the protocol: a non-JSON line on stdout: "this is not json"/],
      ['unknown-id', /broke the protocol: a response to unknown request id 987654/],
    ] as const) {
      const run = await start(prompt);
      const result = await run.result;
      expect(result.stopReason).toBe('error');
      expect(result.diagnostic).toMatch(/^PROVIDER_FAILED: /);
      expect(result.diagnostic).toMatch(reason);
      await until(async () => !processExists(await agentPid(h!.brood, run.id)));
    }
    expect((await (await start('after')).result).output).toBe('echo: after');
  });
});
