/**
 * mcpTools' contract at use(): tool naming (sanitising, stable shortening), INVALID_CONFIG for bad
 * servers and options, MCP_UNAVAILABLE for a stdio server that cannot start or does not answer (with
 * nothing registered and no process left), agent scope, and use() for synchronous vs asynchronous plugins.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodPlugin, Disposer } from '../../../src/index.js';
import { createBrood, mcpTools } from '../../../src/index.js';
import { mcpToolName } from '../../../src/mcp/names.js';
import { TOOL_NAME_PATTERN } from '../../../src/tools/define-tool.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { childProcesses, FIXTURE_SCRIPT, fixture, processHandles } from './helpers.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function makeBrood(): Brood {
  brood = createBrood({ runner: 'inline' });
  return brood;
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('tool names', () => {
  it('are mcp__<server>__<tool>; characters outside [A-Za-z0-9_-] become _', () => {
    expect(mcpToolName('fs', 'read_file')).toBe('mcp__fs__read_file');
    expect(mcpToolName('fs', 'get-sum')).toBe('mcp__fs__get-sum');
    expect(mcpToolName('db', 'query.run/v2 ü')).toBe('mcp__db__query_run_v2__');
  });

  it('past 64 characters keep a prefix plus a stable 8-hex hash of the original name', () => {
    const exact = 'x'.repeat(64 - 'mcp__s__'.length);
    expect(mcpToolName('s', exact)).toBe(`mcp__s__${exact}`);
    const long = `${'y'.repeat(70)}_alpha`;
    const other = `${'y'.repeat(70)}_beta`;
    const name = mcpToolName('s', long);
    expect(name).toHaveLength(64);
    expect(name).toMatch(/^mcp__s__y+_[0-9a-f]{8}$/);
    expect(mcpToolName('s', long)).toBe(name); // stable
    expect(mcpToolName('s', other)).not.toBe(name); // distinct past the cut
    for (const n of [name, mcpToolName('s', 'ü'.repeat(80)), mcpToolName('a'.repeat(40), 'tool')])
      expect(n).toMatch(TOOL_NAME_PATTERN);
  });
});

describe('use() validation', () => {
  it.each([
    ['an invalid server name', { name: 'bad name', command: 'node' }],
    ['a server name with the separator', { name: 'a__b', command: 'node' }],
    ['a server name that is too long', { name: 'n'.repeat(41), command: 'node' }],
    ['neither command nor url', { name: 'x' }],
    ['a non-http url', { name: 'x', url: 'ftp://example.com' }],
    ['an unknown key', { name: 'x', command: 'node', shell: true }],
  ])('%s fails INVALID_CONFIG', async (_label, server) => {
    const brood = makeBrood();
    const error = await rejection(brood.use(mcpTools(server as never)));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(brood.tools.view().names).toEqual([]);
  });

  it.each([
    ['a negative timeout', { timeoutMs: -1 }],
    ['a bad scope', { scope: 'everywhere' }],
    ['include that is not a list', { include: 'echo' }],
    ['an unknown option', { retries: 3 }],
  ])('%s fails INVALID_CONFIG', async (_label, options) => {
    const brood = makeBrood();
    expect((await rejection(brood.use(mcpTools(fixture(), options as never)))).code).toBe('INVALID_CONFIG');
  });

  it('an agent of another runtime as scope fails INVALID_CONFIG and starts nothing', async () => {
    const brood = makeBrood();
    const other = createBrood({ runner: 'inline' });
    try {
      const stranger = await other.createAgent({ model: route });
      expect((await rejection(brood.use(mcpTools(fixture(), { scope: stranger })))).code).toBe('INVALID_CONFIG');
      expect(await childProcesses(FIXTURE_SCRIPT)).toEqual([]);
    } finally {
      await other.close();
    }
  });
});

describe('MCP_UNAVAILABLE at use()', () => {
  it('a command that cannot be spawned names the server and the spawn error', async () => {
    const brood = makeBrood();
    const error = await rejection(brood.use(mcpTools({ name: 'ghost', command: '/nonexistent/mcp-server' })));
    expect(error.code).toBe('MCP_UNAVAILABLE');
    expect(error.message).toMatch(/"ghost".*ENOENT/);
    expect(brood.tools.view().names).toEqual([]);
  });

  it('a process that exits during the handshake reports its exit code and last stderr lines', async () => {
    const brood = makeBrood();
    const script = 'process.stderr.write("first line\\nconfig missing: API_KEY\\n"); process.exit(3)';
    const error = await rejection(
      brood.use(mcpTools({ name: 'dies', command: process.execPath, args: ['-e', script] })),
    );
    expect(error.code).toBe('MCP_UNAVAILABLE');
    expect(error.message).toMatch(/"dies".*exited with code 3.*config missing: API_KEY/);
  });

  it('a process that never answers the handshake within timeoutMs is ended; nothing is registered or left running', async () => {
    const brood = makeBrood();
    const silent = {
      name: 'silent',
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000) // silent-mcp'],
    };
    const error = await rejection(brood.use(mcpTools(silent, { timeoutMs: 500 })));
    expect(error.code).toBe('MCP_UNAVAILABLE');
    expect(error.message).toMatch(/"silent".*did not answer the handshake within 500 ms/);
    expect(await childProcesses('silent-mcp')).toEqual([]);
    expect(processHandles()).toBe(0);
    expect(brood.tools.view().names).toEqual([]);
  });
});

describe('list changes while opening', () => {
  it('a list_changed that arrives before use() resolved is applied once the tools are registered', async () => {
    const brood = makeBrood();
    const applied = new Promise<void>((resolve) => {
      const off = brood.tools.on('change', () => {
        if (!brood.tools.view().has('mcp__fixture__late')) return;
        off();
        resolve();
      });
    });
    await brood.use(mcpTools(fixture({ FIXTURE_CHANGE_ON_FIRST_LIST: '1' })));
    await applied;
    expect(brood.tools.view().names).toEqual(['mcp__fixture__hang', 'mcp__fixture__late', 'mcp__fixture__ping']);
    expect((await brood.tools.execute({ name: 'mcp__fixture__late', arguments: {} })).content).toBe('late ok');
  });
});

describe('scope', () => {
  it("an agent scope registers the tools in that agent's own layer only", async () => {
    const brood = makeBrood();
    const owner = await brood.createAgent({ model: route });
    const bystander = await brood.createAgent({ model: route });
    const dispose = await brood.use(mcpTools(fixture(), { scope: owner }));
    expect(owner.tools.view().names).toEqual(['mcp__fixture__hang', 'mcp__fixture__ping']);
    expect(brood.tools.view().names).toEqual([]);
    expect(bystander.tools.view().names).toEqual([]);
    expect((await owner.tools.execute({ name: 'mcp__fixture__ping', arguments: {} })).content).toMatch(/^pong \d+$/);
    await dispose();
    expect(owner.tools.view().names).toEqual([]);
    expect(await childProcesses(FIXTURE_SCRIPT)).toEqual([]);
  });
});

describe('brood.use() with synchronous and asynchronous plugins', () => {
  it('a synchronous plugin still returns its disposer synchronously and throws synchronously', () => {
    const brood = makeBrood();
    const sync: BroodPlugin = {
      name: 'sync',
      install: () =>
        brood.tools.register({ name: 'plain', description: 'd', parameters: {}, parse: (a) => a, execute: () => 'ok' }),
    };
    const dispose = brood.use(sync);
    expect(typeof dispose).toBe('function');
    expect(brood.tools.view().names).toEqual(['plain']);
    dispose();
    expect(brood.tools.view().names).toEqual([]);
    const failing: BroodPlugin = {
      name: 'fails',
      install: () => {
        throw Object.assign(new Error('nope'), { code: 'INVALID_CONFIG' });
      },
    };
    expectCode(() => brood.use(failing), 'INVALID_CONFIG');
  });

  it('an asynchronous plugin returns a promise of an idempotent disposer; close() disposes what is still installed', async () => {
    const brood = makeBrood();
    const calls: string[] = [];
    const plugin: BroodPlugin<Promise<Disposer>> = {
      name: 'async',
      install: async () => {
        const off = brood.tools.register({
          name: 'later',
          description: 'd',
          parameters: {},
          parse: (a) => a,
          execute: () => 'ok',
        });
        return Object.assign(
          () => {
            calls.push('disposed');
            off();
          },
          { [Symbol.dispose]: () => undefined },
        ) as Disposer;
      },
    };
    const pending = brood.use(plugin);
    expect(pending).toBeInstanceOf(Promise);
    const dispose = await pending;
    expect(brood.tools.view().names).toEqual(['later']);
    await brood.use(plugin).catch((error: { code?: string }) => calls.push(String(error.code)));
    expect(calls).toEqual(['DUPLICATE_TOOL']);
    await brood.close();
    expect(calls).toEqual(['DUPLICATE_TOOL', 'disposed']);
    dispose();
    expect(calls).toEqual(['DUPLICATE_TOOL', 'disposed']);
  });
});
