/**
 * `brood run` with a provider of kind 'ai-sdk': the module shape, its module a path relative to the
 * config file, its export building `@ai-sdk/openai-compatible` models against a loopback server in
 * the CLI's pool threads. A module that cannot be loaded is a config problem (exit 2).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { assertBuilt, ROOT, runCli } from '../../support/run-cli.js';

const FIXTURE = fileURLToPath(new URL('../../support/fixtures/ai-sdk-models.mjs', import.meta.url));

let workspace: string;
let server: LoopbackModel;
beforeAll(async () => {
  assertBuilt();
  // Inside the checkout, so the fixture's own imports resolve and the config names it relatively.
  workspace = await mkdtemp(join(ROOT, 'test', '.tmp-ai-sdk-'));
  server = await startLoopbackModel({
    toolCall: { name: 'list_dir', arguments: { path: '.' } },
    answer: (tool) => `listed: ${tool ?? '(nothing)'}`,
  });
});
afterAll(async () => {
  await server.close();
  await rm(workspace, { recursive: true, force: true });
});

async function run(provider: Record<string, unknown>) {
  const file = join(workspace, `config-${Math.random().toString(36).slice(2)}.json`);
  const config = {
    prompt: 'What is here?',
    models: [{ kind: 'ai-sdk', id: 'sdk', export: 'chatModel', models: ['m'], ...provider }],
    agent: { model: { provider: 'sdk', model: 'm' } },
    tools: ['list_dir'],
  };
  await writeFile(file, JSON.stringify(config));
  return runCli(['run', '--config', file]);
}

it("runs an agent on an AI SDK model built from a module named relative to the config (kind 'ai-sdk')", async () => {
  const result = await run({ module: relative(workspace, FIXTURE), options: { baseURL: server.baseURL } });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('listed: ');
  expect(server.requests.map((request) => request.body.model)).toEqual(['m', 'm']);
});

it('a module that cannot be loaded is a config problem: exit 2 naming the module', async () => {
  const result = await run({ module: './no-such-models.mjs' });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('no-such-models.mjs');
});
