/**
 * `brood acp` and approvals: a call that needs approval becomes `session/request_permission`
 * to a client written with the ACP SDK — allow once runs the call, reject answers the model with
 * APPROVAL_DENIED. The built bin as a real child process.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assertBuilt, CLI } from '../../support/run-cli.js';
import { type ScriptedEndpoint, startScriptedEndpoint } from './scripted-endpoint.js';

let dir: string;
let config: string;
let endpoint: ScriptedEndpoint;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'brood-acp-approvals-'));
  await writeFile(join(dir, 'note.txt'), 'the launch is on Tuesday');
  const readIt = (match: string) => ({
    match,
    steps: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'note.txt' } }] }, { text: 'got {{results}}' }],
  });
  endpoint = await startScriptedEndpoint([readIt('Allow it'), readIt('Reject it')]);
  config = join(dir, 'agent.json');
  await writeFile(
    config,
    JSON.stringify({
      models: [{ id: 'loop', baseURL: endpoint.baseURL, models: ['m'] }],
      agent: { model: { provider: 'loop', model: 'm' } },
      tools: ['read_file'],
      approvals: { ask: ['read_file'] },
      pool: { threads: 1 }, // each `brood acp` boots one isolate, not one per core
    }),
  );
});

afterAll(async () => {
  await endpoint?.close();
  await rm(dir, { recursive: true, force: true });
});

it('allow once runs the call; reject refuses it; the client saw the tool and its arguments', async () => {
  const child = spawn(process.execPath, [CLI, 'acp', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] });
  const asked: acp.RequestPermissionRequest[] = [];
  const answers = ['allow_once', 'reject_once'];
  const updates: acp.SessionNotification[] = [];
  const app = acp
    .client({ name: 'approver' })
    .onNotification('session/update', ({ params }) => void updates.push(params))
    .onRequest('session/request_permission', ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: 'selected', optionId: answers[asked.length - 1] ?? 'reject_once' } };
    });
  const conn = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
    ),
  );
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    await conn.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await conn.agent.request('session/new', { cwd: dir, mcpServers: [] });
    const toolText = () =>
      updates
        .map((n) => n.update)
        .filter((u) => u.sessionUpdate === 'tool_call_update')
        .flatMap((u) => (u as { content?: { content: { text: string } }[] }).content ?? [])
        .map((c) => c.content.text)
        .join('\n');

    const allowed = await conn.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Allow it' }],
    });
    expect(allowed.stopReason).toBe('end_turn');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ sessionId, toolCall: { title: 'read_file', rawInput: { path: 'note.txt' } } });
    expect(asked[0]!.options.map((option) => option.kind)).toEqual(['allow_once', 'reject_once']);
    expect(toolText()).toContain('the launch is on Tuesday');

    updates.length = 0;
    await conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Reject it' }] });
    expect(asked).toHaveLength(2);
    expect(toolText()).toContain('the user rejected the call');
    expect(toolText()).not.toContain('Tuesday');
  } finally {
    child.stdin!.end();
    await exited;
  }
});
