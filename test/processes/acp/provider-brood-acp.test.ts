/**
 * acpProvider driving `brood acp` (the built bin) as a real child process: a lead with scripted models
 * delegates through subagentTool({ provider: 'acp', maxDepth: 'provider-managed' }) to another brood
 * whose model is a scripted loopback endpoint. Parallel children, a continuable child messaged twice
 * (and again after its process died: the session is loaded from the child brood's store), cancel,
 * and the process killed mid-prompt.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messageTools, scriptedModels, subagentTool } from '../../../src/index.js';
import { eventsOf } from '../../support/events.js';
import { route } from '../../support/route.js';
import { assertBuilt, CLI } from '../../support/run-cli.js';
import { processExists } from '../../support/running.js';
import { until } from '../../support/until.js';
import { type AcpHarness, acpHarness, agentPid, signal } from './helpers.js';
import { type ScriptedEndpoint, startScriptedEndpoint } from './scripted-endpoint.js';

let dir: string;
let endpoint: ScriptedEndpoint;
let h: AcpHarness | undefined;
let provider: { command: string; args: string[] };

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'brood-acp-nested-'));
  endpoint = await startScriptedEndpoint([
    { match: 'Hang please', steps: [{ hang: true }] },
    {
      match: 'Use helper',
      steps: [
        { toolCalls: [{ name: 'helper', arguments: { description: 'grandchild', prompt: 'grandchild task' } }] },
        { text: 'child done: {{results}}' },
      ],
    },
    { match: 'How many', steps: [{ text: 'turns so far: {{turns}}' }] },
  ]);
  const config = join(dir, 'child.json');
  await writeFile(
    config,
    JSON.stringify({
      models: [{ id: 'loop', baseURL: endpoint.baseURL, models: ['m'] }],
      agent: { model: { provider: 'loop', model: 'm' } },
      delegation: [{ provider: 'spawn', toolName: 'helper', maxDepth: 2, enableRunInBackground: false }],
      sessions: './child-sessions',
      pool: { threads: 1 }, // each `brood acp` boots one isolate, not one per core
    }),
  );
  provider = { command: process.execPath, args: [CLI, 'acp', '--config', config] };
});

afterAll(async () => {
  await endpoint?.close();
  await rm(dir, { recursive: true, force: true });
});

afterEach(async () => {
  await h?.close();
  h = undefined;
});

const lead = (prompt: string) => ({
  match: prompt,
  turns: [
    { toolCalls: [{ name: 'subagent', arguments: { description: 'ask the other brood', prompt } }] },
    { text: 'Lead got: {{results}}' },
  ],
});

describe('acpProvider → brood acp', () => {
  it('delegation through subagentTool: the child brood answers, its own delegation shows up as tool calls in the recorded child session', async () => {
    const scripts = [
      lead('Summarize the notes'),
      lead('Use helper'),
      {
        match: 'Two at once',
        turns: [
          {
            toolCalls: ['How many one', 'How many two'].map((prompt) => ({
              name: 'subagent',
              arguments: { description: prompt, prompt },
            })),
          },
          { text: '{{results}}' },
        ],
      },
    ];
    h = await acpHarness(provider, { models: [scriptedModels({ id: 'scripted', scripts })] });
    h.brood.use(subagentTool({ provider: 'acp', maxDepth: 'provider-managed', enableRunInBackground: false }));

    const simple = await h.lead.run('Summarize the notes');
    expect(simple).toMatchObject({ stopReason: 'completed', output: 'Lead got: model heard: Summarize the notes' });

    // Scripted positions count a lead's own messages across turns: one fresh lead per scenario.
    const second = await h.brood.createAgent({ model: route });
    const nested = await second.run('Use helper');
    expect(nested.output).toBe('Lead got: child done: model heard: grandchild task');
    const [nestedChild] = (await h.brood.sessions.list()).filter((s) => s.parentSession === second.id);
    if (!nestedChild) throw new Error('no ACP child recorded');
    const names = (await eventsOf(h.brood, nestedChild.id))
      .filter((e) => e.type === 'tool/call')
      .map((e) => String(e.data.name));
    expect(names[0]).toBe('helper');
    expect(names[1]).toMatch(/^subagent sub_\S+ \(spawn, foreground\)$/);
    expect(nestedChild.delegationDepth).toBe(1);

    const third = await h.brood.createAgent({ model: route });
    const parallel = await third.run('Two at once');
    expect(parallel.output.split('\n')).toEqual(['turns so far: 1', 'turns so far: 1']);
    const all = (await h.brood.sessions.list()).filter((s) => s.parentSession !== undefined);
    expect(all).toHaveLength(4);
    const pids = await Promise.all(all.map((s) => agentPid(h!.brood, s.id)));
    expect(new Set(pids).size).toBe(1); // every child, parallel ones included, on one brood acp process
  });

  it('a continuable child is one brood session: messaged twice; after its process is killed, the session is loaded into a new one', async () => {
    h = await acpHarness(provider);
    h.brood.use(messageTools());
    const { childId } = await h.brood.subagents.startContinuable({
      provider: 'acp',
      label: 'counter',
      request: { parent: h.lead, prompt: 'How many first' },
      signal: signal(),
    });
    const answers = async () =>
      (await eventsOf(h!.brood, childId)).filter((e) => e.type === 'assistant/message').map((e) => String(e.data.text));
    await until(async () => (await answers()).length === 1);
    await h.brood.subagents.followup(h.lead, childId, 'How many second', { signal: signal() });
    await until(async () => (await answers()).length === 2);
    const pid = await agentPid(h.brood, childId);
    process.kill(pid, 'SIGKILL');
    await until(() => !processExists(pid));
    await h.brood.subagents.followup(h.lead, childId, 'How many third', { signal: signal() });
    await until(async () => (await answers()).length === 3);
    expect(await answers()).toEqual(['turns so far: 1', 'turns so far: 2', 'turns so far: 3']);
  });

  it('cancel mid-prompt ends the child aborted; a kill mid-prompt ends it PROVIDER_FAILED; the runtime and the next start are fine', async () => {
    h = await acpHarness(provider, { pool: { threads: 1, cancelGraceMs: 30_000 } });
    const controller = new AbortController();
    const cancelled = await h.brood.subagents.start('acp', {
      parent: h.lead,
      prompt: 'Hang please',
      signal: controller.signal,
    });
    await until(() => endpoint.hanging() > 0);
    controller.abort();
    expect((await cancelled.result).stopReason).toBe('aborted');
    await until(() => endpoint.hanging() === 0);

    const killed = await h.brood.subagents.start('acp', { parent: h.lead, prompt: 'Hang please', signal: signal() });
    await until(() => endpoint.hanging() > 0);
    process.kill(await agentPid(h.brood, killed.id), 'SIGKILL');
    const result = await killed.result;
    expect(result.stopReason).toBe('error');
    expect(result.diagnostic).toMatch(/^PROVIDER_FAILED: ACP agent 'acp' \(pid \d+\) was killed by signal SIGKILL/);
    const next = await h.brood.subagents.start('acp', { parent: h.lead, prompt: 'after the crash', signal: signal() });
    expect(await next.result).toMatchObject({ stopReason: 'completed', output: 'model heard: after the crash' });
  });
});
