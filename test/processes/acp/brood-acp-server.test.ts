/**
 * `brood acp` (the built bin, a real child process) against a minimal client written with the SDK's
 * client side: initialize, new session, prompts with streamed updates (delegation included), cancel,
 * an errored turn, load with replay in a fresh process, and stdout carrying protocol only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, runCli } from '../../support/run-cli.js';
import { until } from '../../support/until.js';
import { FIXTURE_SCRIPT } from '../mcp/helpers.js';
import { type ScriptedEndpoint, startScriptedEndpoint } from './scripted-endpoint.js';

let dir: string;
let config: string;
let endpoint: ScriptedEndpoint;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'brood-acp-server-'));
  endpoint = await startScriptedEndpoint([
    {
      match: 'Use helper',
      steps: [
        { toolCalls: [{ name: 'helper', arguments: { description: 'sub task', prompt: 'child task' } }] },
        { text: 'lead done: {{results}}' },
      ],
    },
    { match: 'Hang please', steps: [{ hang: true }] },
    { match: 'Fail please', steps: [{ status: 400 }] },
    { match: 'How many', steps: [{ text: 'turns so far: {{turns}}' }] },
    {
      match: 'Start background',
      steps: [
        { toolCalls: [{ name: 'bg_helper', arguments: { description: 'bg', prompt: 'bg child task' } }] },
        { text: 'started it' },
      ],
    },
    { match: 'Background subagent', steps: [{ text: 'noted the result', delayMs: 1500 }] },
    {
      match: 'Ping it',
      steps: [{ toolCalls: [{ name: 'mcp__notes__ping', arguments: {} }] }, { text: 'got {{results}}' }],
    },
  ]);
  config = join(dir, 'agent.json');
  await writeFile(
    config,
    JSON.stringify({
      models: [{ id: 'loop', baseURL: endpoint.baseURL, models: ['m'] }],
      agent: { model: { provider: 'loop', model: 'm' } },
      delegation: [
        { provider: 'spawn', toolName: 'helper', maxDepth: 2, enableRunInBackground: false },
        { provider: 'spawn', toolName: 'bg_helper', maxDepth: 2, backgroundMode: 'continuable' },
      ],
      sessions: './sessions',
      pool: { threads: 1 }, // each `brood acp` boots one isolate, not one per core
    }),
  );
});

afterAll(async () => {
  await endpoint?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Client {
  conn: acp.ClientConnection;
  updates: acp.SessionNotification[];
  /** Every stdout line, to check that nothing but JSON-RPC was written. */
  stdoutLines: string[];
  stderr: () => string;
  child: ChildProcess;
  close(): Promise<void>;
}

function startClient(): Client {
  const child = spawn(process.execPath, [CLI, 'acp', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] });
  const stdoutLines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const tee = new PassThrough();
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    stdoutLines.push(...lines.filter((l) => l !== ''));
  });
  child.stdout!.pipe(tee);
  const updates: acp.SessionNotification[] = [];
  const app = acp
    .client({ name: 'test-client' })
    .onNotification('session/update', ({ params }) => void updates.push(params));
  const conn = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(tee) as ReadableStream<Uint8Array>,
    ),
  );
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    conn,
    updates,
    stdoutLines,
    stderr: () => stderr,
    child,
    close: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}

const texts = (updates: acp.SessionNotification[], kind: string) =>
  updates
    .filter((n) => n.update.sessionUpdate === kind)
    .map((n) => (n.update as { content: { text: string } }).content.text);

describe('brood acp: an ACP agent on stdio', () => {
  let sessionId: string;

  it('initialize, new session, a prompt with streamed text; then a delegation shown as tool calls; cancel; an errored turn', async () => {
    const client = startClient();
    try {
      const init = await client.conn.agent.request('initialize', {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      expect(init).toMatchObject({
        protocolVersion: 1,
        agentCapabilities: { loadSession: true },
        agentInfo: { name: 'brood' },
      });
      ({ sessionId } = await client.conn.agent.request('session/new', { cwd: dir, mcpServers: [] }));

      const hi = await client.conn.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'Say hi' }],
      });
      expect(hi.stopReason).toBe('end_turn');
      const chunks = texts(client.updates, 'agent_message_chunk');
      expect(chunks.length).toBeGreaterThanOrEqual(2); // streamed as deltas, not one final message
      expect(chunks.join('')).toBe('model heard: Say hi');

      client.updates.length = 0;
      const delegated = await client.conn.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'Use helper' }],
      });
      expect(delegated.stopReason).toBe('end_turn');
      const kinds = client.updates.map((n) => n.update.sessionUpdate);
      const calls = client.updates
        .filter((n) => n.update.sessionUpdate === 'tool_call')
        .map((n) => n.update as acp.ToolCall);
      expect(calls.map((c) => c.title)).toEqual([
        'helper',
        expect.stringMatching(/^subagent sub_\S+ \(spawn, foreground\)$/),
      ]);
      const childCall = calls[1]!.toolCallId;
      const childUpdates = client.updates
        .filter(
          (n) =>
            n.update.sessionUpdate === 'tool_call_update' && (n.update as acp.ToolCallUpdate).toolCallId === childCall,
        )
        .map((n) => n.update as acp.ToolCallUpdate);
      expect(childUpdates.some((u) => JSON.stringify(u.content).includes('model heard: child task'))).toBe(true);
      expect(childUpdates.at(-1)?.status).toBe('completed');
      const helperEnd = client.updates.find(
        (n) =>
          n.update.sessionUpdate === 'tool_call_update' &&
          (n.update as acp.ToolCallUpdate).toolCallId === calls[0]!.toolCallId,
      );
      expect((helperEnd?.update as acp.ToolCallUpdate | undefined)?.status).toBe('completed');
      expect(kinds.at(-1)).toBe('agent_message_chunk');
      expect(texts(client.updates, 'agent_message_chunk').join('')).toBe('lead done: model heard: child task');

      const hanging = client.conn.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'Hang please' }],
      });
      await until(() => endpoint.hanging() > 0);
      await client.conn.agent.notify('session/cancel', { sessionId });
      expect((await hanging).stopReason).toBe('cancelled');

      const failed = await client.conn.agent
        .request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Fail please' }] })
        .catch((error: unknown) => error as acp.RequestError);
      expect(failed).toBeInstanceOf(acp.RequestError);
      expect(JSON.stringify((failed as acp.RequestError).data)).toMatch(/400/);

      const unknown = await client.conn.agent
        .request('session/prompt', { sessionId: 'no-such-session', prompt: [{ type: 'text', text: 'x' }] })
        .catch((error: unknown) => error as acp.RequestError);
      expect(unknown).toBeInstanceOf(acp.RequestError);
    } finally {
      await client.close();
    }
    for (const line of client.stdoutLines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(client.child.exitCode).toBe(0);
  });

  it('session/load in a fresh process replays the history as updates, then continues the same conversation', async () => {
    const client = startClient();
    try {
      await client.conn.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      await client.conn.agent.request('session/load', { sessionId, cwd: dir, mcpServers: [] });
      const replayed = client.updates.filter((n) => n.sessionId === sessionId);
      expect(texts(replayed, 'user_message_chunk')).toEqual(['Say hi', 'Use helper', 'Hang please', 'Fail please']);
      expect(texts(replayed, 'agent_message_chunk')).toEqual([
        'model heard: Say hi',
        'lead done: model heard: child task',
      ]);
      expect(
        replayed.filter((n) => n.update.sessionUpdate === 'tool_call').map((n) => (n.update as acp.ToolCall).title),
      ).toEqual(['helper']);
      client.updates.length = 0;
      await client.conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'How many' }] });
      expect(texts(client.updates, 'agent_message_chunk').join('')).toBe('turns so far: 5');
      const missing = await client.conn.agent
        .request('session/load', { sessionId: 'agent_nope', cwd: dir, mcpServers: [] })
        .catch((error: unknown) => error as acp.RequestError);
      expect(missing).toBeInstanceOf(acp.RequestError);
    } finally {
      await client.close();
    }
  });
});

describe('brood acp: a turn the agent starts on its own', () => {
  it('a settlement notice turn running when a prompt arrives streams first; the prompt still gets all of its own updates', async () => {
    const client = startClient();
    try {
      await client.conn.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId: own } = await client.conn.agent.request('session/new', { cwd: dir, mcpServers: [] });
      await client.conn.agent.request('session/prompt', {
        sessionId: own,
        prompt: [{ type: 'text', text: 'Start background' }],
      });
      // The continuable child settles and its notice wakes the agent (a slow reply): prompt meanwhile.
      await until(() => endpoint.prompts.some((p) => p.startsWith('Background subagent')));
      client.updates.length = 0;
      const answer = await client.conn.agent.request('session/prompt', {
        sessionId: own,
        prompt: [{ type: 'text', text: 'How many now' }],
      });
      expect(answer.stopReason).toBe('end_turn');
      expect(texts(client.updates, 'agent_message_chunk').join('')).toMatch(/turns so far: 3$/);
    } finally {
      await client.close();
    }
  });
});

describe('brood acp: the client MCP servers', () => {
  it('are mounted on the session agent (mcp__<server>__<tool>); an unreachable one fails session/new', async () => {
    const client = startClient();
    try {
      await client.conn.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId: withMcp } = await client.conn.agent.request('session/new', {
        cwd: dir,
        mcpServers: [{ name: 'notes', command: process.execPath, args: [FIXTURE_SCRIPT], env: [] }],
      });
      await client.conn.agent.request('session/prompt', {
        sessionId: withMcp,
        prompt: [{ type: 'text', text: 'Ping it' }],
      });
      const calls = client.updates
        .filter((n) => n.update.sessionUpdate === 'tool_call')
        .map((n) => (n.update as acp.ToolCall).title);
      expect(calls).toEqual(['mcp__notes__ping']);
      expect(texts(client.updates, 'agent_message_chunk').join('')).toMatch(/^got pong \d+$/);
      await client.conn.agent.request('session/close', { sessionId: withMcp });
      const broken = await client.conn.agent
        .request('session/new', {
          cwd: dir,
          mcpServers: [{ name: 'gone', command: join(dir, 'no-such-server'), args: [], env: [] }],
        })
        .catch((error: unknown) => error as acp.RequestError);
      expect(broken).toBeInstanceOf(acp.RequestError);
      expect((broken as acp.RequestError).data).toMatchObject({ code: 'MCP_UNAVAILABLE' });
    } finally {
      await client.close();
    }
  });
});

describe('brood acp: bad flags and config', () => {
  // A missing --config: test/unit/cli/command-line.test.ts.
  it('exit 2 with one line on stderr, naming the command', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ models: [] }));
    const invalid = await runCli(['acp', '--config', bad]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^brood acp: config .*bad\.json: models: /),
    ]);
    expect(invalid.stdout).toBe('');
  });
});
