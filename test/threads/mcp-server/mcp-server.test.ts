/**
 * mcpServer against the official SDK client over the SDK's in-memory transport, with real pool threads
 * and scripted models: tools/list, a foreground delegate with progress, structured output, a task polled
 * to completion, a cancelled task, a failing child, bad arguments, the capability gate, a disconnect
 * mid-call, and server.close() cancelling its tasks.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodMcpServer, McpServerOptions } from '../../../src/index.js';
import { createBrood, mcpServer, scriptedModels, subagentTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { until } from '../../support/until.js';

let brood: Brood | undefined;
let server: BroodMcpServer | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.close().catch(() => undefined);
  await server?.close();
  await brood?.close();
  client = server = brood = undefined;
});

const scripts = [
  { match: 'say hello', turns: [{ text: 'hello from the child' }] },
  { match: 'remember this', turns: [{ text: 'first answer' }, { text: 'second answer' }] },
  {
    match: 'use a tool',
    turns: [
      { toolCalls: [{ name: 'subagent', arguments: { description: 'grandchild', prompt: 'say hello' } }] },
      { text: 'child saw: {{results}}' },
    ],
  },
  { match: 'give data', turns: [{ toolCalls: [{ name: 'structured_output', arguments: { answer: 42 } }] }] },
  { match: 'slow work', latencyMs: 60_000, turns: [{ text: 'never' }] },
  { match: 'background work', latencyMs: 100, turns: [{ text: 'background answer' }] },
  { match: 'refuse this', turns: [{ finish: 'refusal' as const, text: 'no' }] },
];

async function serve(options: Partial<McpServerOptions> = {}, runner: 'worker' | 'inline' = 'worker'): Promise<Client> {
  brood = createBrood({
    runner,
    pool: { threads: 2 },
    models: [scriptedModels({ id: 'scripted', models: ['scripted', 'other'], scripts })],
  });
  // The children's own delegation tool (nested delegation), as `brood mcp` installs the config's entries.
  brood.use(subagentTool({ provider: 'spawn', enableRunInBackground: false }));
  server = mcpServer(brood, { delegation: { provider: 'spawn', maxDepth: 2 }, agent: { model: route }, ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

function textOf(result: object): string {
  const [first] = ((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[];
  return first?.text ?? '';
}

function endOfFirstRun(): Promise<string> {
  return new Promise((resolve) =>
    brood!.subagents.on('end', (info: { stopReason: string }) => resolve(info.stopReason)),
  );
}

function startTask(c: Client, prompt: string) {
  return c.request(
    {
      method: 'tools/call',
      params: { name: 'delegate', arguments: { description: 'bg', prompt }, task: { ttl: 60_000 } },
    },
    CreateTaskResultSchema,
  );
}

describe('tools and capabilities', () => {
  it('serves delegate (taskSupport optional) and advertises tasks; list_models only with model selection', async () => {
    const c = await serve();
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(['delegate']);
    expect(tools[0]?.execution).toEqual({ taskSupport: 'optional' });
    expect(tools[0]?.inputSchema.required).toEqual(['description', 'prompt']);
    expect(c.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect(c.getServerVersion()?.name).toBe('brood');
  });

  it('list_models shows the catalog as list_subagent_models does, and a chosen model is used', async () => {
    const c = await serve({ delegation: { provider: 'spawn', enableModelSelection: true } });
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['delegate', 'list_models']);
    expect(textOf(await c.callTool({ name: 'list_models', arguments: { provider: 'scripted' } }))).toBe(
      'scripted\nother',
    );
    const chosen = await c.callTool({
      name: 'delegate',
      arguments: { description: 'pick', prompt: 'say hello', model: 'scripted/other' },
    });
    expect(textOf(chosen)).toBe('hello from the child');
    const unknown = await c.callTool({
      name: 'delegate',
      arguments: { description: 'x', prompt: 'say hello', model: 'scripted/nope' },
    });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^\[UNKNOWN_MODEL\]/);
  });

  it('tasks: false serves delegate without task support', async () => {
    const c = await serve({ tasks: false });
    expect((await c.listTools()).tools[0]?.execution).toEqual({ taskSupport: 'forbidden' });
    expect(c.getServerCapabilities()?.tasks).toBeUndefined();
  });
});

describe('foreground delegate', () => {
  it("returns the child's answer and reports progress when the client sent a token", async () => {
    const c = await serve();
    const progress: string[] = [];
    const result = await c.callTool(
      { name: 'delegate', arguments: { description: 'nested', prompt: 'use a tool' } },
      undefined,
      {
        onprogress: (p) => progress.push(p.message ?? ''),
      },
    );
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('child saw: hello from the child');
    expect(progress.some((line) => /started foreground child/.test(line))).toBe(true);
    expect(progress.some((line) => /calls subagent/.test(line))).toBe(true);
    // The served child's tree is in the runtime's sessions: parent → child → grandchild.
    const sessions = await brood!.sessions.list();
    expect(sessions.map((s) => s.delegationDepth).sort()).toEqual([0, 1, 2]);
  });

  it('output_schema returns structuredContent', async () => {
    const c = await serve();
    const result = await c.callTool({
      name: 'delegate',
      arguments: {
        description: 'data',
        prompt: 'give data',
        output_schema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] },
      },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ answer: 42 });
  });

  it('an output_schema with a regular expression is refused before any child starts', async () => {
    const c = await serve();
    let started = 0;
    brood!.subagents.on('start', () => void started++);
    const catastrophic = { type: 'object', properties: { answer: { type: 'string', pattern: '^(a+)+$' } } };
    const refused = await c.callTool({
      name: 'delegate',
      arguments: { description: 'data', prompt: 'give data', output_schema: catastrophic },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^\[INVALID_ARGS\] output_schema\.properties\.answer: 'pattern'/);
    const asTask = c.request(
      {
        method: 'tools/call',
        params: {
          name: 'delegate',
          arguments: { description: 'd', prompt: 'p', output_schema: { $defs: { x: { format: 'email' } } } },
          task: { ttl: 60_000 },
        },
      },
      CreateTaskResultSchema,
    );
    await expect(asTask).rejects.toThrow(/\[INVALID_ARGS\] output_schema\.\$defs\.x: 'format'/);
    expect(started).toBe(0);
  });

  it('a failing child is an isError result with the delegation headline', async () => {
    const c = await serve();
    const result = await c.callTool({ name: 'delegate', arguments: { description: 'fail', prompt: 'refuse this' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^subagent declined the task/);
  });

  it('bad arguments and forbidden choices are isError results naming the code, not protocol errors', async () => {
    const c = await serve();
    const missing = await c.callTool({ name: 'delegate', arguments: { description: 'no prompt' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^\[INVALID_ARGS\]/);
    const extra = await c.callTool({ name: 'delegate', arguments: { description: 'd', prompt: 'p', persona: 'root' } });
    expect(textOf(extra)).toMatch(/^\[INVALID_ARGS\]/);
    const model = await c.callTool({
      name: 'delegate',
      arguments: { description: 'd', prompt: 'p', model: 'scripted/other' },
    });
    expect(textOf(model)).toMatch(/^\[INVALID_ARGS\].*model selection is disabled/);
    const unknown = await c.callTool({ name: 'list_models', arguments: {} });
    expect(textOf(unknown)).toMatch(/^\[UNKNOWN_TOOL\]/);
  });

  it('a client that disconnects mid-call cancels that call', async () => {
    const c = await serve();
    const started = new Promise<void>((resolve) => brood!.subagents.on('start', () => resolve()));
    const ended = endOfFirstRun();
    const pending = c
      .callTool({ name: 'delegate', arguments: { description: 'slow', prompt: 'slow work' } })
      .catch(() => 'closed');
    await started;
    await c.close();
    expect(await pending).toBe('closed');
    expect(await ended).toBe('aborted');
  });
});

describe('tasks', () => {
  it('a task-augmented delegate returns a task at once; tasks/get reports working then completed; tasks/result the output', async () => {
    const c = await serve();
    const { task } = await startTask(c, 'background work');
    expect(task.status).toBe('working');
    await until(async () => (await c.experimental.tasks.getTask(task.taskId)).status === 'completed');
    const result = await c.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(textOf(result)).toBe('background answer');
    const listed = await c.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toEqual([task.taskId]);
  });

  it('tasks/cancel cancels the child; the task reads cancelled and its result is ABORTED', async () => {
    const c = await serve();
    const { task } = await startTask(c, 'slow work');
    const cancelled = await c.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    const result = await c.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^\[ABORTED\]/);
    expect((await c.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
  });

  it('a failing child fails its task', async () => {
    const c = await serve();
    const { task } = await startTask(c, 'refuse this');
    await until(async () => (await c.experimental.tasks.getTask(task.taskId)).status !== 'working');
    expect((await c.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
    const result = await c.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
  });

  it('tasks.max caps the working tasks of one client: one more is an MCP error, and an ended one frees its slot', async () => {
    const c = await serve({ tasks: { max: 2 } });
    const first = await startTask(c, 'slow work');
    await startTask(c, 'slow work');
    await expect(startTask(c, 'slow work')).rejects.toThrow(/too many tasks: .*2 working \(tasks\.max\)/);
    await c.experimental.tasks.cancelTask(first.task.taskId);
    expect((await startTask(c, 'slow work')).task.status).toBe('working');
    expectCode(() => mcpServer(brood!, { delegation: { provider: 'spawn' }, tasks: { max: 0 } }), 'INVALID_CONFIG');
  });

  it('a task outlives its client; server.close() cancels it', async () => {
    const c = await serve();
    const { task } = await startTask(c, 'slow work');
    const ended = endOfFirstRun();
    await c.close();
    let settled = false;
    void ended.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    await server!.close();
    expect(await ended).toBe('aborted');
    expect(task.taskId).toMatch(/^job_/);
  });
});

describe('options', () => {
  it('a continuable delegation: delegate answers with a child_id, continue carries the conversation on, the parent never asks a model', async () => {
    const c = await serve({ delegation: { provider: 'spawn', backgroundMode: 'continuable' } });
    const tools = (await c.listTools()).tools;
    expect(tools.map((tool) => tool.name)).toEqual(['delegate', 'continue']);
    expect(tools[0]?.execution).toEqual({ taskSupport: 'forbidden' });

    const first = await c.callTool({ name: 'delegate', arguments: { description: 'talk', prompt: 'remember this' } });
    expect(first.isError).toBeFalsy();
    const childId = (first._meta as Record<string, unknown>)['brood/childId'] as string;
    expect(textOf(first)).toBe(`first answer\n\nchild_id: ${childId}`);

    const second = await c.callTool({ name: 'continue', arguments: { child_id: childId, message: 'and now?' } });
    expect(textOf(second)).toBe(`second answer\n\nchild_id: ${childId}`);
    const { events } = await brood!.sessions.read(childId);
    expect(events.filter((event) => event.type === 'user/message')).toHaveLength(2);

    // The served parent took no settlement notice: it made no model request and holds no message.
    const parents = (await brood!.sessions.list()).filter((header) => header.delegationDepth === 0);
    expect(parents).toHaveLength(1);
    const parentEvents = (await brood!.sessions.read(parents[0]!.id)).events;
    expect(parentEvents.filter((event) => event.type === 'model/request' || event.type === 'user/message')).toEqual([]);
  });

  it('continuable children on the inline runner too', async () => {
    const c = await serve({ delegation: { provider: 'spawn', backgroundMode: 'continuable' } }, 'inline');
    const first = await c.callTool({ name: 'delegate', arguments: { description: 'talk', prompt: 'remember this' } });
    const childId = (first._meta as Record<string, unknown>)['brood/childId'] as string;
    expect(textOf(first)).toBe(`first answer\n\nchild_id: ${childId}`);
    const second = await c.callTool({ name: 'continue', arguments: { child_id: childId, message: 'and now?' } });
    expect(textOf(second)).toBe(`second answer\n\nchild_id: ${childId}`);
  });

  it('continue with an id this server did not start, or bad arguments: isError with the code', async () => {
    const c = await serve({ delegation: { provider: 'spawn', backgroundMode: 'continuable' } });
    const unknown = await c.callTool({ name: 'continue', arguments: { child_id: 'sub_nope', message: 'hi' } });
    expect(unknown.isError).toBe(true);
    expect((unknown._meta as Record<string, unknown>)['brood/errorCode']).toBe('NOT_RESUMABLE');
    const bad = await c.callTool({ name: 'continue', arguments: { child_id: 'x' } });
    expect((bad._meta as Record<string, unknown>)['brood/errorCode']).toBe('INVALID_ARGS');
  });

  it('continue is not served when children do not keep their conversation', async () => {
    const c = await serve();
    expect((await c.listTools()).tools.map((tool) => tool.name)).toEqual(['delegate']);
    const result = await c.callTool({ name: 'continue', arguments: { child_id: 'x', message: 'hi' } });
    expect((result._meta as Record<string, unknown>)['brood/errorCode']).toBe('UNKNOWN_TOOL');
  });

  it('without run_in_background in the delegation, delegate still runs in the foreground', async () => {
    const c = await serve({ delegation: { provider: 'spawn', enableRunInBackground: false } });
    const result = await c.callTool({ name: 'delegate', arguments: { description: 'hi', prompt: 'say hello' } });
    expect(textOf(result)).toBe('hello from the child');
  });

  it('bad options are INVALID_CONFIG', async () => {
    brood = createBrood({ runner: 'worker', pool: { threads: 1 } });
    expectCode(() => mcpServer(brood!, { delegation: { provider: '' } }), 'INVALID_CONFIG');
    expectCode(() => mcpServer(brood!, { delegation: { provider: 'spawn' }, tasks: 'yes' } as never), 'INVALID_CONFIG');
    expectCode(() => mcpServer(brood!, {} as never), 'INVALID_CONFIG');
  });
});
