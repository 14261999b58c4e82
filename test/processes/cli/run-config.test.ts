/**
 * `brood run`'s config is validated by the library's own option schemas: every openAICompatible /
 * anthropicCompatible option (picked by `kind`), createBrood's and createAgent's options (maxSteps,
 * pool, ...), subagentTool's and mcpTools'. Real CLI processes against loopback model servers. A bad
 * option of each kind, refused with exit 2: test/unit/cli/command-line.test.ts.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRunConfig } from '../../../src/cli/run-config.js';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { assertBuilt, ROOT, runCli, type Spawned } from '../../support/run-cli.js';
import { message } from '../../unit/models/anthropic-wire.js';
import { json, type Loopback, startLoopback } from '../../unit/models/loopback.js';

let workspace: string;
let openai: LoopbackModel;
let anthropic: Loopback;

beforeAll(async () => {
  assertBuilt();
  workspace = await mkdtemp(join(tmpdir(), 'brood-run-config-'));
  openai = await startLoopbackModel({
    toolCall: { name: 'list_dir', arguments: { path: '.' } },
    answer: (tool) => `listed: ${tool ?? '(nothing)'}`,
  });
  anthropic = await startLoopback();
});

afterAll(async () => {
  await openai.close();
  await anthropic.close();
  await rm(workspace, { recursive: true, force: true });
});

let files = 0;
async function run(config: Record<string, unknown>, env: Record<string, string> = {}): Promise<Spawned> {
  const file = join(workspace, `config-${files++}.json`);
  await writeFile(file, JSON.stringify({ prompt: 'What is here?', ...config }));
  return runCli(['run', '--config', file], { env });
}

/** An OpenAI-compatible provider entry; a config that is refused needs no server behind the URL. */
const openaiProvider = (extra: Record<string, unknown> = {}, baseURL = 'http://127.0.0.1:1/v1') => ({
  id: 'loop',
  baseURL,
  models: ['loop-model'],
  ...extra,
});
const openaiAgent = { model: { provider: 'loop', model: 'loop-model' } };

describe('providers take every option of their factory', () => {
  it("kind 'anthropic': the Messages API, its key header, request options and stream: false", async () => {
    anthropic.push(json(message([{ type: 'text', text: 'Bonjour from the Messages API' }], 'end_turn')));
    const result = await run(
      {
        models: [
          {
            kind: 'anthropic',
            id: 'an',
            baseURL: anthropic.base,
            apiKeyEnv: 'BROOD_TEST_AN_KEY',
            models: [{ id: 'claude-x', maxTokens: 512 }],
            temperature: 0.25,
            headers: { 'x-team': 'blue' },
            stream: false,
            retry: { retries: 0 },
          },
        ],
        agent: { model: { provider: 'an', model: 'claude-x' } },
      },
      { BROOD_TEST_AN_KEY: 'sk-ant-loop' },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Bonjour from the Messages API\n');
    const [request] = anthropic.seen;
    expect(request?.url).toBe('/v1/messages');
    expect(request?.headers['x-api-key']).toBe('sk-ant-loop');
    expect(request?.headers['x-team']).toBe('blue');
    expect(request?.body).toMatchObject({ model: 'claude-x', max_tokens: 512, temperature: 0.25 });
    expect(request?.body.stream).not.toBe(true);
  });

  it("kind 'openai' (the default): request options reach the wire; agent.maxSteps ends the turn", async () => {
    const before = openai.requests.length;
    const result = await run({
      models: [openaiProvider({ kind: 'openai', temperature: 0.5, headers: { 'x-org': 'brood' } }, openai.baseURL)],
      agent: { ...openaiAgent, maxSteps: 1 },
      tools: ['list_dir'],
    });
    // One model request was allowed: it asked for list_dir, and the turn ended before a second.
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^brood run: agent ended max-steps/);
    const requests = openai.requests.slice(before);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.body).toMatchObject({ temperature: 0.5 });
    expect(requests[0]?.headers['x-org']).toBe('brood');
  });

  it('the runtime-wide maxSteps applies too', async () => {
    const result = await run({
      models: [openaiProvider({}, openai.baseURL)],
      agent: openaiAgent,
      tools: ['list_dir'],
      maxSteps: 1,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^brood run: agent ended max-steps/);
  });
});

describe('the config reference (docs/cli.md)', () => {
  it('its example config is valid as written', async () => {
    const readme = await readFile(join(ROOT, 'docs/cli.md'), 'utf8');
    const block = /## `brood run` config[\s\S]*?```jsonc\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    // JSON with comments, read the way TypeScript reads tsconfig files.
    const { config, error } = ts.parseConfigFileTextToJson('config.jsonc', block!);
    expect(error).toBeUndefined();
    const file = join(workspace, 'reference.json');
    await writeFile(file, JSON.stringify(config));
    const key = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-reference';
    try {
      const loaded = await loadRunConfig(file);
      expect(loaded.models.map((provider) => provider.kind)).toEqual(['openai']);
      expect(Object.keys(loaded.mcpServers)).toEqual(['fs']);
    } finally {
      if (key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = key;
    }
  });
});
