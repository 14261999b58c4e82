/**
 * `brood run` with `mcpServers`: the built bin spawns the official filesystem server over stdio, the
 * agent (against a loopback OpenAI-compatible endpoint) calls its tool, and the CLI exits cleanly,
 * which it could not do with the server process still attached. Bad entries follow the CLI's codes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { assertBuilt, runCli } from '../../support/run-cli.js';
import { FILESYSTEM_SCRIPT } from './helpers.js';

describe('brood run with mcpServers', () => {
  let model: LoopbackModel;
  let workspace: string;

  beforeAll(async () => {
    assertBuilt();
    workspace = await mkdtemp(join(tmpdir(), 'brood-run-mcp-'));
    await writeFile(join(workspace, 'note.txt'), 'the launch is on Tuesday');
    model = await startLoopbackModel({
      toolCall: { name: 'mcp__fs__read_text_file', arguments: { path: join(workspace, 'note.txt') } },
      answer: (tool) => `The note says: ${tool ?? '(nothing)'}`,
    });
  });

  afterAll(async () => {
    await model.close();
    await rm(workspace, { recursive: true, force: true });
  });

  const config = (mcpServers: Record<string, unknown>) => ({
    models: [{ id: 'loop', baseURL: model.baseURL, models: ['loop-model'] }],
    agent: { model: { provider: 'loop', model: 'loop-model' } },
    mcpServers,
    prompt: 'What does the note say?',
  });

  async function writeConfig(value: unknown, name: string): Promise<string> {
    const file = join(workspace, name);
    await writeFile(file, JSON.stringify(value));
    return file;
  }

  it("the agent calls the filesystem server's tool and the CLI exits 0", async () => {
    // `.` is the config file's directory: stdio servers start there.
    const file = await writeConfig(
      config({ fs: { command: process.execPath, args: [FILESYSTEM_SCRIPT, '.'] } }),
      'mcp.json',
    );
    const result = await runCli(['run', '--config', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The note says: the launch is on Tuesday\n');
    const offered = model.requests.at(-2)?.body.tools?.map((t) => t.function.name) ?? [];
    expect(offered).toContain('mcp__fs__read_text_file');
    expect(offered).toContain('mcp__fs__list_directory');
  });

  // Invalid entries (a bad name, both command and url) exit 2: test/unit/cli/command-line.test.ts.
  it('a server that cannot start exits 1 with one line naming it', async () => {
    const missing = await runCli([
      'run',
      '--config',
      await writeConfig(config({ ghost: { command: '/nonexistent/mcp-server' } }), 'ghost.json'),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toMatch(/mcpServers\.ghost: MCP server "ghost".*ENOENT.*\[MCP_UNAVAILABLE\]/);
  });
});
