/**
 * MCP tools from the official reference servers (server-everything, server-filesystem) spawned over
 * stdio: listing, calls through an agent's scripted tool calls, errors, a child whose filter denies
 * one MCP tool, Code Mode calling an MCP tool, and disposal that leaves no process and no handle.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/index.js';
import { createBrood, mcpTools, memorySessions, scriptedModels } from '../../../src/index.js';
import { runtimeOf } from '../../../src/runtime/plugin-access.js';
import { route } from '../../support/route.js';
import { processExists } from '../../support/running.js';
import { tapStore } from '../../support/tap-store.js';
import {
  childProcesses,
  EVERYTHING_SCRIPT,
  everything,
  FILESYSTEM_SCRIPT,
  filesystem,
  processHandles,
  requestedTools,
  toolResults,
} from './helpers.js';

type Scripts = NonNullable<Parameters<typeof scriptedModels>[0]['scripts']>;

let brood: Brood | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function makeBrood(
  scripts: Scripts = [],
  options: BroodOptions = {},
): { brood: Brood; tap: ReturnType<typeof tapStore> } {
  const tap = tapStore(memorySessions());
  brood = createBrood({
    pool: { threads: 1 }, // one isolate to boot: the cases run one agent at a time
    sessions: tap.store,
    models: [scriptedModels({ id: 'scripted', scripts })],
    ...options,
  });
  return { brood, tap };
}

async function tempRoot(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'brood-mcp-'));
  dirs.push(dir);
  return dir;
}

describe('server-everything over stdio', () => {
  it('use() resolves with every tool registered as mcp__everything__<tool>, descriptions and schemas as the server gave them', async () => {
    const { brood } = makeBrood([], { runner: 'inline' }); // no agent: no pool threads needed
    const dispose = await brood.use(mcpTools(everything()));
    const view = brood.tools.view();
    expect(view.names).toContain('mcp__everything__echo');
    expect(view.names).toContain('mcp__everything__get-sum');
    expect(view.names.every((name) => name.startsWith('mcp__everything__'))).toBe(true);
    const echo = view.schemas.find((schema) => schema.name === 'mcp__everything__echo');
    expect(echo?.description).toMatch(/echo/i);
    expect(echo?.parameters).toEqual({
      type: 'object',
      properties: { message: { type: 'string', description: 'Message to echo' } },
      required: ['message'],
    });
    await dispose();
    expect(brood.tools.view().names).toEqual([]);
  });

  it('an agent calls an MCP tool through its scripted tool call; text is joined, an image is a placeholder in the text and a part', async () => {
    const { brood } = makeBrood([
      {
        match: 'call',
        turns: [
          {
            toolCalls: [
              { name: 'mcp__everything__echo', arguments: { message: 'hello mcp' } },
              { name: 'mcp__everything__get-tiny-image', arguments: {} },
            ],
          },
          { text: 'got: {{results}}' },
        ],
      },
    ]);
    await brood.use(mcpTools(everything()));
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('call');
    expect(result.stopReason).toBe('completed');
    expect(result.output).toContain('Echo: hello mcp');
    const [echo, image] = toolResults((await brood.sessions.read(agent.id)).events);
    expect(echo).toMatchObject({ name: 'mcp__everything__echo', isError: false, content: 'Echo: hello mcp' });
    expect(image?.isError).toBe(false);
    expect(image?.content).toContain('[image: image/png]');
    expect(image?.content).not.toContain('iVBOR'); // no base64 in the text
    expect(image?.parts).toContainEqual(expect.objectContaining({ type: 'image', mediaType: 'image/png' }));
    // The host still gets the whole result.
    const direct = await brood.tools.execute({ name: 'mcp__everything__get-tiny-image', arguments: {} });
    expect(JSON.stringify(direct.value)).toContain('iVBOR');
  });

  it('bad arguments are INVALID_ARGS before the server is asked; arguments reach the server as written', async () => {
    const { brood } = makeBrood([], { runner: 'inline' }); // no agent: no pool threads needed
    await brood.use(mcpTools(everything()));
    const bad = await brood.tools.execute({ name: 'mcp__everything__get-sum', arguments: { a: 1, b: 'two' } });
    expect(bad).toMatchObject({ isError: true, error: { code: 'INVALID_ARGS' } });
    const good = await brood.tools.execute({ name: 'mcp__everything__get-sum', arguments: '{"a": 2, "b": 40}' });
    expect(good).toMatchObject({ isError: false, content: 'The sum of 2 and 40 is 42.' });
  });

  it('include / exclude pick tools by server name or brood name; a duplicate server name fails DUPLICATE_TOOL and leaves no extra process', async () => {
    const { brood } = makeBrood([], { runner: 'inline' }); // no agent: no pool threads needed
    await brood.use(
      mcpTools(everything(), { include: ['echo', 'mcp__everything__get-sum', 'get-env'], exclude: ['get-env'] }),
    );
    expect(brood.tools.view().names).toEqual(['mcp__everything__echo', 'mcp__everything__get-sum']);
    expect(await childProcesses(EVERYTHING_SCRIPT)).toHaveLength(1);
    const again = brood.use(mcpTools(everything(), { include: ['echo'] }));
    await expect(again).rejects.toMatchObject({ code: 'DUPLICATE_TOOL' });
    expect(brood.tools.view().names).toEqual(['mcp__everything__echo', 'mcp__everything__get-sum']);
    expect(await childProcesses(EVERYTHING_SCRIPT)).toHaveLength(1);
    expect(
      (await brood.tools.execute({ name: 'mcp__everything__echo', arguments: { message: 'still' } })).content,
    ).toBe('Echo: still');
  });

  it('readOnlyHint makes a tool concurrency-safe only when the host opts in', async () => {
    const { brood } = makeBrood([], { runner: 'inline' }); // no agent: no pool threads needed
    await brood.use(mcpTools(everything('plain'), { include: ['echo', 'toggle-simulated-logging'] }));
    await brood.use(
      mcpTools(everything('trusted'), { include: ['echo', 'toggle-simulated-logging'], concurrencySafe: true }),
    );
    await brood.use(
      mcpTools(everything('listed'), {
        include: ['echo', 'toggle-simulated-logging'],
        concurrencySafe: ['toggle-simulated-logging'],
      }),
    );
    const scope = runtimeOf(brood).tools.createScope(() => undefined);
    const classOf = (name: string) => scope.classify(name, name.endsWith('echo') ? { message: 'x' } : {});
    expect(classOf('mcp__plain__echo')).toBe('exclusive');
    expect(classOf('mcp__trusted__echo')).toBe('parallel'); // annotated readOnlyHint: true
    expect(classOf('mcp__trusted__toggle-simulated-logging')).toBe('exclusive'); // readOnlyHint: false
    expect(classOf('mcp__listed__echo')).toBe('exclusive');
    expect(classOf('mcp__listed__toggle-simulated-logging')).toBe('parallel');
    scope.dispose();
  });

  it('a child whose toolFilter denies one MCP tool is not shown it and a forged call to it is refused; allowed MCP tools work', async () => {
    const { brood, tap } = makeBrood([
      {
        match: 'child',
        turns: [
          {
            toolCalls: [
              { name: 'mcp__everything__get-sum', arguments: { a: 1, b: 2 } },
              { name: 'mcp__everything__echo', arguments: { message: 'from child' } },
            ],
          },
          { text: 'child: {{results}}' },
        ],
      },
    ]);
    await brood.use(mcpTools(everything(), { include: ['echo', 'get-sum'] }));
    const parent = await brood.createAgent({ model: route });
    const run = await brood.subagents.start('spawn', {
      parent,
      prompt: 'child',
      signal: new AbortController().signal,
      toolFilter: { deny: ['mcp__everything__get-sum'] },
    });
    const result = await run.result;
    expect(result.stopReason).toBe('completed');
    await tap.waitFor(run.id, 'turn/end');
    const events = (await brood.sessions.read(run.id)).events;
    expect(requestedTools(events)[0]).toEqual(['mcp__everything__echo']);
    const [forged, allowed] = toolResults(events);
    expect(forged).toMatchObject({ name: 'mcp__everything__get-sum', isError: true, errorCode: 'UNKNOWN_TOOL' });
    expect(allowed).toMatchObject({ name: 'mcp__everything__echo', isError: false, content: 'Echo: from child' });
    // The parent (no filter) still sees both: one connection serves every agent.
    expect(brood.tools.view().names).toEqual(['mcp__everything__echo', 'mcp__everything__get-sum']);
    expect(await childProcesses(EVERYTHING_SCRIPT)).toHaveLength(1);
    await run.dispose();
  });

  it('Code Mode calls an MCP tool from run_code through the same resolver', async () => {
    const code = 'const a = await tools.mcp__everything__echo({ message: "in code" }); return a;';
    const { brood } = makeBrood(
      [
        {
          match: 'code',
          turns: [
            { toolCalls: [{ name: 'run_code', arguments: { description: 'echo', code } }] },
            { text: '{{results}}' },
          ],
        },
      ],
      { codeMode: 'code' },
    );
    await brood.use(mcpTools(everything(), { include: ['echo'] }));
    expect(brood.tools.sdk()).toContain('mcp__everything__echo');
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('code');
    expect(result.stopReason).toBe('completed');
    const [runCode] = toolResults((await brood.sessions.read(agent.id)).events);
    expect(runCode).toMatchObject({ name: 'run_code', isError: false });
    expect(String(runCode?.content)).toContain('Echo: in code');
  });

  it('the disposer resolves after the process exited: no child process and no process handle are left', async () => {
    const { brood } = makeBrood([], { runner: 'inline' }); // no agent: no pool threads needed
    const handlesBefore = processHandles();
    const dispose = await brood.use(mcpTools(everything()));
    const [pid] = await childProcesses(EVERYTHING_SCRIPT);
    expect(pid).toBeDefined();
    expect(processExists(pid!)).toBe(true);
    await dispose();
    expect(processExists(pid!)).toBe(false);
    expect(await childProcesses(EVERYTHING_SCRIPT)).toEqual([]);
    expect(processHandles()).toBe(handlesBefore);
    expect(brood.tools.view().names).toEqual([]);
    await dispose(); // idempotent
  });

  it('brood.close() ends every MCP server process, including one still starting', async () => {
    const { brood } = makeBrood([], { runner: 'inline' }); // no agent: no pool threads needed
    await brood.use(mcpTools(everything('one')));
    const starting = brood.use(mcpTools(everything('two')));
    const closed = brood.close();
    await expect(starting).rejects.toMatchObject({ code: 'DISPOSED' });
    await closed;
    expect(await childProcesses(EVERYTHING_SCRIPT)).toEqual([]);
    expect(processHandles()).toBe(0);
  });
});

describe('server-filesystem over stdio', () => {
  it('lists and reads files in its root; a path outside the root is an errored result with the server text', async () => {
    const root = await tempRoot();
    await writeFile(join(root, 'notes.txt'), 'line one\nline two\n');
    const { brood } = makeBrood([
      {
        match: 'files',
        turns: [
          { toolCalls: [{ name: 'mcp__fs__list_directory', arguments: { path: root } }] },
          { toolCalls: [{ name: 'mcp__fs__read_text_file', arguments: { path: join(root, 'notes.txt') } }] },
          { toolCalls: [{ name: 'mcp__fs__read_text_file', arguments: { path: '/etc/hostname' } }] },
          { text: 'done' },
        ],
      },
    ]);
    await brood.use(mcpTools(filesystem(root)));
    expect(brood.tools.view().names).toContain('mcp__fs__read_text_file');
    const agent = await brood.createAgent({ model: route });
    expect((await agent.run('files')).stopReason).toBe('completed');
    const [listing, read, outside] = toolResults((await brood.sessions.read(agent.id)).events);
    expect(listing).toMatchObject({ isError: false, content: '[FILE] notes.txt' });
    expect(read).toMatchObject({ isError: false, content: 'line one\nline two\n' });
    expect(outside?.isError).toBe(true);
    expect(String(outside?.content)).toMatch(/access denied|outside allowed/i);
    expect(outside?.errorCode).toBeUndefined(); // the tool failed, not the protocol
    expect(await childProcesses(FILESYSTEM_SCRIPT)).toHaveLength(1);
  });
});
