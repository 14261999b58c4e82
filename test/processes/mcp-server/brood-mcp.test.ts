/**
 * `brood mcp` (the built bin, a real child process) against three clients: the official SDK client
 * over stdio and over Streamable HTTP, and the MCP Inspector CLI as a third-party client. Models are a
 * scripted OpenAI-compatible endpoint on loopback. Covers tools/list, a foreground delegate with
 * progress, a nested delegation in `brood inspect`, a task polled to completion, a cancelled task, a
 * failing child, a client that disconnects mid-call, and bad input on the wire.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, ROOT, runCli, runNode } from '../../support/run-cli.js';
import { until } from '../../support/until.js';
import { type ScriptedEndpoint, startScriptedEndpoint } from '../acp/scripted-endpoint.js';

let dir: string;
let config: string;
let endpoint: ScriptedEndpoint;
let client: Client | undefined;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'brood-mcp-server-'));
  endpoint = await startScriptedEndpoint([
    {
      match: 'nest please',
      steps: [
        { toolCalls: [{ name: 'subagent', arguments: { description: 'leaf', prompt: 'leaf task' } }] },
        { text: 'nested: {{results}}' },
      ],
    },
    { match: 'leaf task', steps: [{ text: 'leaf answer' }] },
    { match: 'quick task', steps: [{ text: 'quick answer' }] },
    { match: 'hang task', steps: [{ hang: true }] },
    { match: 'broken task', steps: [{ status: 400 }] },
  ]);
  config = join(dir, 'mcp.json');
  await writeFile(
    config,
    JSON.stringify({
      models: [{ id: 'loop', baseURL: endpoint.baseURL, models: ['m'], retry: { retries: 0 } }],
      agent: { model: { provider: 'loop', model: 'm' } },
      delegation: [{ provider: 'spawn', maxDepth: 2 }],
      sessions: './sessions',
      pool: { threads: 1 }, // each server boots one isolate, not one per core: its children are few and short
    }),
  );
});

afterEach(async () => {
  await client?.close().catch(() => undefined);
  client = undefined;
});

afterAll(async () => {
  await endpoint?.close();
  await rm(dir, { recursive: true, force: true });
});

async function connectedClient(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--config', config],
    stderr: 'pipe',
  });
  const connected = new Client({ name: 'test', version: '1.0.0' });
  await connected.connect(transport);
  return connected;
}

/** A server of its own, stopped after the test: for cases about closing the connection. */
async function stdioClient(): Promise<Client> {
  client = await connectedClient();
  return client;
}

function textOf(result: object): string {
  const [first] = ((result as { content?: unknown }).content ?? []) as { text?: string }[];
  return first?.text ?? '';
}

function delegate(c: Client, prompt: string) {
  const params = { name: 'delegate', arguments: { description: prompt, prompt } };
  return c.request({ method: 'tools/call', params }, CallToolResultSchema);
}

function startTask(c: Client, prompt: string) {
  const params = { name: 'delegate', arguments: { description: prompt, prompt }, task: { ttl: 60_000 } };
  return c.request({ method: 'tools/call', params }, CreateTaskResultSchema);
}

describe('over stdio with the SDK client', () => {
  // One server for the cases that only make requests: each starts its own children and leaves nothing
  // running (a cancelled task's child is gone before the case ends).
  let shared: Client;
  beforeAll(async () => {
    shared = await connectedClient();
  });
  afterAll(async () => {
    await shared?.close();
  });

  it('lists delegate with optional task support', async () => {
    const c = shared;
    const { tools } = await c.listTools();
    expect(tools.map((t) => [t.name, t.execution?.taskSupport])).toEqual([['delegate', 'optional']]);
  });

  it('a foreground delegate reports progress; its nested tree shows in brood inspect', async () => {
    const c = await stdioClient();
    const progress: string[] = [];
    const result = await c.callTool(
      { name: 'delegate', arguments: { description: 'nest', prompt: 'nest please' } },
      undefined,
      {
        onprogress: (p) => progress.push(p.message ?? ''),
      },
    );
    expect(textOf(result)).toBe('nested: leaf answer');
    expect(progress.some((line) => line.includes('calls subagent'))).toBe(true);
    await c.close();
    const inspected = await runCli(['inspect', join(dir, 'sessions'), '--json']);
    expect(inspected.code).toBe(0);
    const rows = JSON.parse(inspected.stdout) as { depth: number; label?: string }[];
    const labels = rows.map((row) => [row.depth, row.label]);
    expect(labels).toContainEqual([1, 'nest']);
    expect(labels).toContainEqual([2, 'leaf']);
  });

  it('a task is polled to completion; another is cancelled; a failing child fails its task', async () => {
    const c = shared;
    const done = await startTask(c, 'quick task');
    await until(async () => (await c.experimental.tasks.getTask(done.task.taskId)).status === 'completed');
    expect(textOf(await c.experimental.tasks.getTaskResult(done.task.taskId, CallToolResultSchema))).toBe(
      'quick answer',
    );

    const hanging = await startTask(c, 'hang task');
    await until(() => endpoint.hanging() > 0);
    expect((await c.experimental.tasks.cancelTask(hanging.task.taskId)).status).toBe('cancelled');
    await until(() => endpoint.hanging() === 0);

    const broken = await startTask(c, 'broken task');
    await until(async () => (await c.experimental.tasks.getTask(broken.task.taskId)).status !== 'working');
    expect((await c.experimental.tasks.getTask(broken.task.taskId)).status).toBe('failed');
    const failed = await c.experimental.tasks.getTaskResult(broken.task.taskId, CallToolResultSchema);
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^subagent run failed/);
  });

  it('a failing foreground child is an isError result; bad arguments name the code', async () => {
    const c = shared;
    const failed = await c.callTool({ name: 'delegate', arguments: { description: 'broken', prompt: 'broken task' } });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^subagent run failed/);
    const bad = await c.callTool({ name: 'delegate', arguments: { prompt: 'no description' } });
    expect(textOf(bad)).toMatch(/^\[INVALID_ARGS\]/);
  });

  it('a client that disconnects mid-call cancels the child', async () => {
    const c = await stdioClient();
    const pending = delegate(c, 'hang task').catch(() => 'closed');
    await until(() => endpoint.hanging() > 0);
    await c.close();
    expect(await pending).toBe('closed');
    await until(() => endpoint.hanging() === 0);
  });
});

describe('usage', () => {
  // Bad flags: test/unit/cli/command-line.test.ts.
  it('a config without delegation is one line on stderr, exit 2', async () => {
    const noDelegation = join(dir, 'no-delegation.json');
    await writeFile(
      noDelegation,
      JSON.stringify({
        models: [{ id: 'loop', baseURL: endpoint.baseURL, models: ['m'] }],
        agent: { model: { provider: 'loop', model: 'm' } },
      }),
    );
    const result = await runCli(['mcp', '--config', noDelegation]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^brood mcp: config .*: delegation: needs at least one entry[^\n]+\n$/);
  });
});

describe('a config that asks for approvals', () => {
  it('is refused at start, exit 1: an MCP client cannot answer approvals, so calls would wait a day', async () => {
    const asking = join(dir, 'asking.json');
    await writeFile(
      asking,
      JSON.stringify({
        models: [{ id: 'loop', baseURL: endpoint.baseURL, models: ['m'] }],
        agent: { model: { provider: 'loop', model: 'm' } },
        delegation: [{ provider: 'spawn' }],
        approvals: { ask: ['*'], children: 'ask' },
      }),
    );
    const result = await runCli(['mcp', '--config', asking], { timeoutMs: 30_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/approvals\.ask: .* \[INVALID_CONFIG\]\n$/);
  });
});

describe('bad input on stdio', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    child?.kill();
    child = undefined;
  });

  it('answers malformed JSON, non-JSON-RPC and oversized lines with JSON-RPC errors and keeps serving', async () => {
    child = spawn(process.execPath, [CLI, 'mcp', '--config', config], { cwd: ROOT });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const replies = (): { id: unknown; error?: { code: number }; result?: unknown }[] =>
      out
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line));
    child.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": \n');
    child.stdin.write('{"hello": "world", "id": 2}\n');
    child.stdin.write(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"${'x'.repeat(33 * 1024 * 1024)}"}}\n`);
    child.stdin.write('{"jsonrpc":"2.0","id":4,"method":"ping"}\n');
    await until(() => replies().length >= 4);
    const [parse, invalid, oversized, ping] = replies();
    expect(parse).toMatchObject({ id: null, error: { code: -32700 } });
    expect(invalid).toMatchObject({ id: 2, error: { code: -32600 } });
    expect(oversized).toMatchObject({ id: 3, error: { code: -32600 } });
    expect(ping).toMatchObject({ id: 4, result: {} });
  });
});

describe('over Streamable HTTP', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    child?.kill('SIGTERM');
    child = undefined;
  });

  it('serves at /mcp on 127.0.0.1: tools/list and a delegate; an oversized body is refused', async () => {
    child = spawn(process.execPath, [CLI, 'mcp', '--config', config, '--http', '0'], { cwd: ROOT });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    await until(() => /serving MCP at (\S+)/.test(err));
    const url = /serving MCP at (\S+)/.exec(err)?.[1] ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(err).toMatch(/^brood mcp: warning: no --auth-token-env: any local process .* can call delegate$/m);
    client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['delegate']);
    expect(
      textOf(await client.callTool({ name: 'delegate', arguments: { description: 'q', prompt: 'quick task' } })),
    ).toBe('quick answer');
    const big = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: 'x'.repeat(33 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('with --auth-token-env, a client without the bearer token is refused (401); one with it is served', async () => {
    child = spawn(process.execPath, [CLI, 'mcp', '--config', config, '--http', '0', '--auth-token-env', 'MCP_TOKEN'], {
      cwd: ROOT,
      env: { ...process.env, MCP_TOKEN: 'token-from-the-environment' },
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    await until(() => /serving MCP at (\S+)/.test(err));
    expect(err).not.toMatch(/warning/);
    const url = new URL(/serving MCP at (\S+)/.exec(err)?.[1] ?? '');
    const anonymous = new Client({ name: 'test', version: '1.0.0' });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(url))).rejects.toMatchObject({ code: 401 });
    client = new Client({ name: 'test', version: '1.0.0' });
    const headers = { authorization: 'Bearer token-from-the-environment' };
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['delegate']);
  });
});

describe('with the MCP Inspector CLI', () => {
  // The inspector looks for its package.json relative to its working directory: run it from a folder
  // whose parent has one (it then finds its own).
  const inspector = (method: string[]): ReturnType<typeof runNode> =>
    runNode(
      [
        join(ROOT, 'node_modules/.bin/mcp-inspector-cli'),
        '--cli',
        ...method,
        '--',
        process.execPath,
        CLI,
        'mcp',
        '--config',
        config,
      ],
      {
        cwd: join(ROOT, 'test'),
        timeoutMs: 60_000,
      },
    );

  // Once: a third-party client connects, and its call of delegate runs a child (tools/list: the SDK client).
  it('calls delegate', async () => {
    // --tool-arg takes every value up to the next option, so --tool-name comes after it.
    const called = await inspector([
      '--method',
      'tools/call',
      '--tool-arg',
      'description=quick',
      'prompt=quick task',
      '--tool-name',
      'delegate',
    ]);
    expect(called.code).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({ content: [{ type: 'text', text: 'quick answer' }] });
  });
});
