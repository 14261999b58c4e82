/**
 * acpProvider's policy surface: honest capabilities at the gate and at mount, permission policies
 * (each decision logged), the fs root, option validation, delegation through subagentTool, and a
 * continuable ACP child messaged twice.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AcpPermissionRequest } from '../../../src/index.js';
import {
  acpProvider,
  createBrood,
  fileSessions,
  messageTools,
  scriptedModels,
  subagentTool,
} from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { eventsOf } from '../../support/events.js';
import { route } from '../../support/route.js';
import { processExists } from '../../support/running.js';
import { until } from '../../support/until.js';
import { type AcpHarness, acpHarness, agentPid, fixtureOptions, signal } from './helpers.js';

let h: AcpHarness | undefined;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brood-acp-policy-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const start = (prompt: string) => h!.brood.subagents.start('acp', { parent: h!.lead, prompt, signal: signal() });
const notes = async (id: string, type: string) =>
  (await eventsOf(h!.brood, id)).filter((e) => e.type === type).map((e) => e.data);

describe('acpProvider: honest capabilities', () => {
  it('advertises false for every control and true for continuable; the gate refuses each control', async () => {
    h = await acpHarness(fixtureOptions());
    const provider = h.brood.subagents.get('acp')!;
    expect(provider.capabilities).toEqual({
      persona: false,
      toolFilter: false,
      depthLimit: false,
      agentOptions: false,
      outputSchema: false,
      maxSteps: false,
    });
    expect(typeof provider.prepareContinuable).toBe('function');
    const base = { parent: h.lead, prompt: 'x', signal: signal() };
    for (const extra of [
      { persona: 'terse' },
      { persona: '' },
      { toolFilter: { deny: [] } },
      { maxDepth: 2 },
      { agentOptions: { model: 'scripted' } },
      { outputSchema: { type: 'object' } },
      { maxSteps: 5 },
    ]) {
      await expectCode(h.brood.subagents.start('acp', { ...base, ...extra }), 'UNSUPPORTED_CAPABILITY');
    }
    expect((await h.brood.sessions.list()).map((s) => s.id)).toEqual([h.lead.id]); // refused before anything was created
  });

  it('a subagentTool bound to it needs maxDepth provider-managed and no persona/filter (INVALID_CONFIG at mount)', async () => {
    h = await acpHarness(fixtureOptions());
    expectCode(() => h!.brood.use(subagentTool({ provider: 'acp', toolName: 'ask_a', maxDepth: 2 })), 'INVALID_CONFIG');
    expectCode(
      () =>
        h!.brood.use(
          subagentTool({ provider: 'acp', toolName: 'ask_b', maxDepth: 'provider-managed', persona: 'terse' }),
        ),
      'INVALID_CONFIG',
    );
    expectCode(
      () =>
        h!.brood.use(
          subagentTool({
            provider: 'acp',
            toolName: 'ask_c',
            maxDepth: 'provider-managed',
            toolFilter: { deny: ['x'] },
          }),
        ),
      'INVALID_CONFIG',
    );
    expectCode(
      () =>
        h!.brood.use(subagentTool({ provider: 'acp', toolName: 'ask_e', maxDepth: 'provider-managed', maxSteps: 5 })),
      'INVALID_CONFIG',
    );
    expect(() =>
      h!.brood.use(subagentTool({ provider: 'acp', toolName: 'ask_d', maxDepth: 'provider-managed' })),
    ).not.toThrow();
  });

  it('rejects bad options with INVALID_CONFIG naming the key', () => {
    for (const bad of [
      { command: '' },
      { command: 'x', cwd: 'relative' },
      { command: 'x', fs: { root: 'rel' } },
      { command: 'x', permissions: 'maybe' },
      { command: 'x', timeoutMs: 0 },
      { command: 'x', bogus: 1 },
    ]) {
      expectCode(() => acpProvider(bad as never), 'INVALID_CONFIG');
    }
  });
});

describe('acpProvider: delegation through subagentTool', () => {
  it('a lead delegates to the ACP agent; parallel calls of one message run as parallel ACP children', async () => {
    const scripts = [
      {
        match: 'Delegate twice',
        turns: [
          {
            toolCalls: [1, 2].map((n) => ({
              name: 'subagent',
              arguments: { description: `part ${n}`, prompt: `count part ${n}` },
            })),
          },
          { text: 'Lead got: {{results}}' },
        ],
      },
    ];
    h = await acpHarness(fixtureOptions(), { models: [scriptedModels({ id: 'scripted', scripts })] });
    h.brood.use(subagentTool({ provider: 'acp', maxDepth: 'provider-managed', enableRunInBackground: false }));
    const result = await h.lead.run('Delegate twice');
    expect(result.stopReason).toBe('completed');
    const lines = result.output.split('\n');
    expect(lines[0]).toMatch(/^Lead got: prompt #1 in session fixture-\d+-\d+/);
    expect(lines[1]).toMatch(/^prompt #1 in session fixture-\d+-\d+/);
    const children = (await h.brood.sessions.list()).filter((s) => s.parentSession === h!.lead.id);
    expect(children.map((c) => c.delegationDepth)).toEqual([1, 1]);
  });

  it('a continuable ACP child keeps its ACP session: messaged twice, the second prompt lands in the same session', async () => {
    h = await acpHarness(fixtureOptions());
    h.brood.use(messageTools());
    const { childId } = await h.brood.subagents.startContinuable({
      provider: 'acp',
      label: 'counter',
      request: { parent: h.lead, prompt: 'count first' },
      signal: signal(),
    });
    const assistantTexts = async () => (await notes(childId, 'assistant/message')).map((d) => String(d.text));
    await until(async () => (await assistantTexts()).length === 1);
    await h.brood.subagents.followup(h.lead, childId, 'count second', { signal: signal() });
    await until(async () => (await assistantTexts()).length === 2);
    const [first, second] = await assistantTexts();
    expect(first).toMatch(/^prompt #1 in session (\S+)/);
    expect(second).toMatch(/^prompt #2 in session (\S+)/);
    expect(/session (\S+)/.exec(first!)![1]).toBe(/session (\S+)/.exec(second!)![1]);
    const ends = await notes(childId, 'turn/end');
    expect(ends.map((d) => d.reason)).toEqual(['completed', 'completed']);
  });
});

describe('acpProvider: a continuable child whose ACP session is gone', () => {
  it('the process died while the child was idle: its next turn fails PROVIDER_FAILED (the agent cannot load sessions), the runtime is fine', async () => {
    h = await acpHarness(fixtureOptions());
    const { childId } = await h.brood.subagents.startContinuable({
      provider: 'acp',
      label: 'c',
      request: { parent: h.lead, prompt: 'count' },
      signal: signal(),
    });
    await until(async () => (await notes(childId, 'turn/end')).length === 1);
    const pid = await agentPid(h.brood, childId);
    process.kill(pid, 'SIGKILL');
    await until(() => !processExists(pid));
    await h.brood.subagents.followup(h.lead, childId, 'count again', { signal: signal() });
    await until(async () => (await notes(childId, 'turn/end')).length === 2);
    const [, second] = await notes(childId, 'turn/end');
    expect(second).toMatchObject({
      reason: 'error',
      diagnostic: expect.stringMatching(
        /^PROVIDER_FAILED: the ACP session \S+ was lost \(ACP agent 'acp' \(pid \d+\) was killed by signal SIGKILL.*\) and the agent cannot load sessions$/s,
      ),
    });
    expect((await (await start('fresh')).result).output).toBe('echo: fresh');
  });

  it('cold resume in a new runtime: with the provider registered the child is served by it (and says the session is lost); without it NOT_RESUMABLE', async () => {
    const sessionsDir = join(dir, 'cold');
    const first = createBrood({
      pool: { threads: 1 },
      sessions: fileSessions(sessionsDir),
      providers: [acpProvider(fixtureOptions())],
    });
    const lead = await first.createAgent({ model: route });
    const { childId } = await first.subagents.startContinuable({
      provider: 'acp',
      label: 'c',
      request: { parent: lead, prompt: 'count' },
      signal: signal(),
    });
    await until(async () => (await first.sessions.read(childId)).events.some((e) => e.type === 'turn/end'));
    await first.close();

    const bare = createBrood({ pool: { threads: 1 }, sessions: fileSessions(sessionsDir), providers: [] });
    const bareLead = await bare.resumeAgent(lead.id);
    await expectCode(bare.subagents.followup(bareLead, childId, 'count', { signal: signal() }), 'NOT_RESUMABLE');
    await bare.close();

    const second = createBrood({
      pool: { threads: 1 },
      sessions: fileSessions(sessionsDir),
      providers: [acpProvider(fixtureOptions())],
    });
    try {
      const resumedLead = await second.resumeAgent(lead.id);
      await second.subagents.followup(resumedLead, childId, 'count', { signal: signal() });
      await until(
        async () => (await second.sessions.read(childId)).events.filter((e) => e.type === 'turn/end').length === 2,
      );
      const ends = (await second.sessions.read(childId)).events.filter((e) => e.type === 'turn/end');
      expect(ends[1]!.data).toMatchObject({
        reason: 'error',
        diagnostic: expect.stringMatching(/^PROVIDER_FAILED: the ACP session \S+ was lost/),
      });
      expect((await second.sessions.read(childId)).events.filter((e) => e.type === 'model/request')).toEqual([]); // never ran on a brood model
    } finally {
      await second.close();
    }
  });
});

describe('acpProvider: permission requests', () => {
  it("'deny' (default) picks the reject option, 'allow' the allow option; each decision is logged in the child session", async () => {
    h = await acpHarness(fixtureOptions());
    const denied = await start('permission');
    expect((await denied.result).output).toBe('permission: selected no');
    expect(await notes(denied.id, 'acp/permission')).toEqual([
      {
        toolCallId: 'perm-1',
        title: 'Delete build/',
        options: [
          { optionId: 'yes', kind: 'allow_once' },
          { optionId: 'no', kind: 'reject_once' },
        ],
        policy: 'deny',
        decision: 'deny',
        optionId: 'no',
      },
    ]);
    await h.close();
    h = await acpHarness(fixtureOptions({ permissions: 'allow' }));
    const allowed = await start('permission');
    expect((await allowed.result).output).toBe('permission: selected yes');
    expect(await notes(allowed.id, 'acp/permission')).toMatchObject([
      { policy: 'allow', decision: 'allow', optionId: 'yes' },
    ]);
  });

  it('a policy function sees the request; a throwing policy denies, and the log says why', async () => {
    const asked: AcpPermissionRequest[] = [];
    let fail = false;
    h = await acpHarness(
      fixtureOptions({
        permissions: async (request) => {
          asked.push(request);
          if (fail) throw new Error('policy store offline');
          return request.toolCall.kind === 'delete' ? 'allow' : 'deny';
        },
      }),
    );
    const first = await start('permission');
    expect((await first.result).output).toBe('permission: selected yes');
    expect(asked[0]).toMatchObject({
      childId: first.id,
      toolCall: { toolCallId: 'perm-1', kind: 'delete', rawInput: { path: 'build/' } },
      options: [{ optionId: 'yes' }, { optionId: 'no' }],
    });
    fail = true;
    const second = await start('permission');
    expect((await second.result).output).toBe('permission: selected no');
    expect(await notes(second.id, 'acp/permission')).toMatchObject([
      { policy: 'function', decision: 'deny', note: 'the permission policy failed: policy store offline' },
    ]);
  });
});

describe('acpProvider: fs confined to a root', () => {
  it('reads and writes inside the root; refuses outside it and through a symlink; logs every call', async () => {
    const root = join(dir, 'root');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'in.txt'), 'inside text');
    await writeFile(join(dir, 'secret.txt'), 'outside text');
    await symlink(join(dir, 'secret.txt'), join(root, 'link.txt'));
    h = await acpHarness(fixtureOptions({ fs: { root } }));
    expect((await (await start(`fs-read ${join(root, 'in.txt')}`)).result).output).toBe('read: inside text');
    const outside = await start(`fs-read ${join(dir, 'secret.txt')}`);
    expect((await outside.result).output).toMatch(/^fs error: .*outside the allowed root/);
    expect((await (await start(`fs-read ${join(root, 'link.txt')}`)).result).output).toMatch(
      /outside the allowed root/,
    );
    const write = await start(`fs-write ${join(root, 'sub', 'new.txt')} fresh words`);
    expect((await write.result).output).toBe('written');
    expect(await readFile(join(root, 'sub', 'new.txt'), 'utf8')).toBe('fresh words');
    expect((await (await start(`fs-write ${join(dir, 'escape.txt')} nope`)).result).output).toMatch(
      /outside the allowed root/,
    );
    expect(await notes(outside.id, 'acp/fs')).toMatchObject([{ op: 'read', path: join(dir, 'secret.txt'), ok: false }]);
    expect(await notes(write.id, 'acp/fs')).toEqual([{ op: 'write', path: join(root, 'sub', 'new.txt'), ok: true }]);
  });

  it('without fs the capability is not offered and the methods are not answered', async () => {
    await writeFile(join(dir, 'plain.txt'), 'text');
    h = await acpHarness(fixtureOptions());
    expect((await (await start(`fs-read ${join(dir, 'plain.txt')}`)).result).output).toMatch(/^fs error: /);
  });
});
