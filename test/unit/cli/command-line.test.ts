/**
 * SPEC §14, the command line in process (`runCommandLine`): bad flags and bad configs exit 2 with one
 * line on stderr naming the problem, `--help` and `--version` answer for every command. `brood run`'s
 * config is validated by the library's own option schemas: every openAICompatible /
 * anthropicCompatible option (picked by `kind`), createBrood's and createAgent's options, subagentTool's
 * and mcpTools'. Bad configs are refused before any request, so they need no server behind the URL.
 * That the bin wires argv, the exit code and the streams to this function is proven by real processes
 * (test/processes/cli/cli.test.ts).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectUsageError, runInProcess } from '../../support/command-line.js';

let workspace: string;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'brood-command-line-'));
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

afterEach(() => {
  vi.unstubAllEnvs();
});

let files = 0;
async function writeConfig(value: unknown): Promise<string> {
  const file = join(workspace, `config-${files++}.json`);
  await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

describe('usage errors exit 2 with one line on stderr', () => {
  it.each([
    [['demo', '--bogus'], /^brood demo: Unknown option '--bogus'/],
    [['inspect'], /^brood inspect: expected <dir>/],
    [['frobnicate'], /^brood: unknown command 'frobnicate'/],
    [[], /^brood: missing command/],
    [['trace', '/definitely/not/here', 'x'], /not a directory/],
    [['run'], /--config <file.json> is required/],
    [['run', '--config'], /^brood run: Option '--config <value>' argument missing/],
    [['acp'], /^brood acp: --config <file.json> is required/],
    [['mcp'], /^brood mcp: --config <file.json> is required/],
    [['mcp', '--config', 'mcp.json', '--http', 'eighty'], /^brood mcp: --http: 'eighty' is not a port/],
    [['mcp', '--config', 'mcp.json', '--host', '0.0.0.0'], /^brood mcp: --host needs --http <port>/],
    [['mcp', '--config', 'mcp.json', '--auth-token-env', 'T'], /^brood mcp: --auth-token-env needs --http <port>/],
    [
      ['mcp', '--config', 'mcp.json', '--http', '0', '--allowed-origin', 'https://a.example/path'],
      /^brood mcp: --allowed-origin: 'https:\/\/a\.example\/path' is not an origin/,
    ],
    [['mcp', '--config', 'mcp.json', '--http', '0', '--allowed-host', 'a:1'], /^brood mcp: --allowed-host: 'a:1'/],
  ])('%j', async (args, pattern) => {
    expectUsageError(await runInProcess(args), pattern);
  });
});

describe('brood mcp --http without a token it needs: exit 1 before anything starts', () => {
  it('off loopback, --auth-token-env is required', async () => {
    const result = await runInProcess(['mcp', '--config', 'mcp.json', '--http', '0', '--host', '0.0.0.0']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^brood: mcp: --host 0\.0\.0\.0 is not a loopback address: --auth-token-env <NAME> is required.* \[INVALID_CONFIG\]\n$/,
    );
  });

  it("the token's environment variable must be set", async () => {
    vi.stubEnv('BROOD_TEST_MCP_TOKEN', '');
    const result = await runInProcess([
      'mcp',
      '--config',
      'x.json',
      '--http',
      '0',
      '--auth-token-env',
      'BROOD_TEST_MCP_TOKEN',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /--auth-token-env BROOD_TEST_MCP_TOKEN: that environment variable is not set \[INVALID_CONFIG\]/,
    );
  });
});

describe('brood run: a bad config → exit 2, one line', () => {
  const config = (overrides: Record<string, unknown> = {}) => ({
    models: [{ id: 'loop', baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'LOOP_KEY', models: ['loop-model'] }],
    agent: { model: { provider: 'loop', model: 'loop-model' } },
    tools: ['read_file', 'list_dir'],
    delegation: [{ provider: 'spawn', maxDepth: 1, enableRunInBackground: false }],
    prompt: 'What does the note say?',
    ...overrides,
  });

  it.each([
    ['missing file', null, /cannot read config .*ENOENT/],
    ['invalid JSON', '{ "models": [', /is not valid JSON/],
    ['unknown built-in tool', { tools: ['rm_rf'] }, /tools\[0\]: /],
    ['unknown key', { colour: 'blue' }, /\(root\): .*colour/],
    [
      'agent provider not configured',
      { agent: { model: { provider: 'nope', model: 'm' } } },
      /agent\.model\.provider: 'nope' is not one of/,
    ],
    [
      'unset key variable',
      { models: [{ id: 'loop', baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'BROOD_TEST_UNSET_KEY', models: ['m'] }] },
      /environment variable BROOD_TEST_UNSET_KEY is not set/,
    ],
    [
      'bad delegation instance',
      { delegation: [{ provider: 'spawn', maxDepth: -1 }] },
      /delegation\[0\]\.maxDepth: must be a non-negative safe integer/,
    ],
    ['no prompt', { prompt: undefined }, /prompt: required/],
  ])('%s', async (_name, value, pattern) => {
    vi.stubEnv('LOOP_KEY', 'k');
    vi.stubEnv('BROOD_TEST_UNSET_KEY', undefined);
    const file =
      value === null
        ? join(workspace, 'missing.json')
        : await writeConfig(typeof value === 'string' ? value : config(value));
    expectUsageError(await runInProcess(['run', '--config', file]), pattern);
  });
});

describe('brood run: a bad option of a library factory → exit 2 and one line naming the key', () => {
  const openaiProvider = (extra: Record<string, unknown> = {}) => ({
    id: 'loop',
    baseURL: 'http://127.0.0.1:1/v1',
    models: ['loop-model'],
    ...extra,
  });
  const openaiAgent = { model: { provider: 'loop', model: 'loop-model' } };

  it.each([
    ['unknown kind', { models: [openaiProvider({ kind: 'gemini' })] }, /models\[0\]\.kind: must be 'openai'/],
    ['inline key', { models: [openaiProvider({ apiKey: 'sk-1' })] }, /models\[0\]\.apiKey: .*apiKeyEnv/],
    ['request option type', { models: [openaiProvider({ temperature: 'hot' })] }, /models\[0\]\.temperature: /],
    [
      'per-model option',
      { models: [openaiProvider({ models: [{ id: 'm', seed: 1.5 }] })] },
      /models\[0\]\.models\[0\]\.seed: /,
    ],
    ['retry option', { models: [openaiProvider({ retry: { retries: 99 } })] }, /models\[0\]\.retry\.retries: /],
    [
      'an OpenAI-only option on anthropic',
      { models: [{ kind: 'anthropic', id: 'loop', baseURL: 'http://127.0.0.1:1', models: ['m'], seed: 1 }] },
      /models\[0\]: Unrecognized key: "seed"$/,
    ],
    ['runtime maxSteps', { maxSteps: 0 }, /^brood run: config .*: maxSteps: must be a positive safe integer/],
    ['agent maxSteps', { agent: { ...openaiAgent, maxSteps: 1.5 } }, /agent\.maxSteps: must be a positive/],
    ['pool option', { pool: { threads: 0 } }, /pool\.threads: /],
    [
      'a cross-option rule of createBrood',
      { pool: { hangTimeoutMs: 10 }, codeBusyTimeoutMs: 100 },
      /pool\.hangTimeoutMs: must exceed codeBusyTimeoutMs.*\[INVALID_CONFIG\]/,
    ],
    ['delegation option', { delegation: [{ provider: 'spawn', maxDepth: -1 }] }, /delegation\[0\]\.maxDepth: /],
    ['MCP server name', { mcpServers: { 'bad name': { command: 'x' } } }, /mcpServers\.bad name: letters, digits/],
    ['mcpTools option', { mcpServers: { fs: { command: 'x', timeoutMs: -1 } } }, /mcpServers\.fs\.timeoutMs: /],
    [
      'an MCP server with both command and url',
      { mcpServers: { fs: { command: 'x', url: 'http://127.0.0.1:1/' } } },
      /mcpServers\.fs/,
    ],
  ])('%s', async (_name, extra, pattern) => {
    const file = await writeConfig({
      prompt: 'What is here?',
      models: [openaiProvider()],
      agent: openaiAgent,
      ...extra,
    });
    expectUsageError(await runInProcess(['run', '--config', file]), pattern);
  });
});

describe('help and version', () => {
  const COMMANDS = ['demo', 'run', 'inspect', 'trace', 'acp', 'host', 'mcp'];

  it.each([[['--help']], [['-h']], [['help']]])(
    'brood %j prints the overview with every command, exit 0',
    async (args) => {
      const result = await runInProcess(args);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      for (const command of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^ {2}brood ${command} `, 'm'));
    },
  );

  it.each(COMMANDS.map((command, i) => [command, i % 2 === 0 ? '--help' : '-h']))(
    'brood %s %s answers with its usage, exit 0',
    async (command, flag) => {
      const result = await runInProcess([command, flag]);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(new RegExp(`^Usage: brood ${command}`));
    },
  );

  it.each([[['--version']], [['-v']], ...COMMANDS.map((command, i) => [[command, i % 2 === 0 ? '-v' : '--version']])])(
    'brood %j prints the package version',
    async (args) => {
      const { version } = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      };
      expect(await runInProcess(args)).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    },
  );

  it('flags after the command still count: brood trace <dir> <id> --help', async () => {
    const result = await runInProcess(['trace', 'some-dir', 'some-id', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: brood trace/);
  });

  it('help wins over version', async () => {
    expect((await runInProcess(['run', '--version', '--help'])).stdout).toMatch(/^Usage: brood run/);
  });
});
