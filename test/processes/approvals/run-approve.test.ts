/**
 * `brood run` and approvals, the built bin against a loopback endpoint, stdin not a
 * terminal: a call the config's approvals.ask names is refused unless `--approve` names its tool.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { assertBuilt, runCli } from '../../support/run-cli.js';

let model: LoopbackModel;
let workspace: string;
let config: string;

beforeAll(async () => {
  assertBuilt();
  workspace = await mkdtemp(join(tmpdir(), 'brood-run-approve-'));
  await writeFile(join(workspace, 'note.txt'), 'the launch is on Tuesday');
  model = await startLoopbackModel({
    toolCall: { name: 'read_file', arguments: { path: 'note.txt' } },
    answer: (tool) => `The note says: ${tool ?? '(nothing)'}`,
  });
  config = join(workspace, 'config.json');
  await writeFile(
    config,
    JSON.stringify({
      models: [{ id: 'loop', baseURL: model.baseURL, apiKeyEnv: 'LOOP_KEY', models: ['loop-model'] }],
      agent: { model: { provider: 'loop', model: 'loop-model' } },
      tools: ['read_file'],
      approvals: { ask: ['read_file'] },
      prompt: 'What does the note say?',
    }),
  );
});

afterAll(async () => {
  await model?.close();
  await rm(workspace, { recursive: true, force: true });
});

it('without a terminal the call is refused: the model reads APPROVAL_DENIED naming --approve', async () => {
  const result = await runCli(['run', '--config', config], { env: { LOOP_KEY: 'k' } });
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(
    /^The note says: Error: no terminal to ask for approval of "read_file" \(brood run --approve read_file/,
  );
  expect(result.stdout).not.toContain('Tuesday');
});

it('--approve names the tool: the call runs without a question', async () => {
  const result = await runCli(['run', '--config', config, '--approve', 'list_dir,read_file'], {
    env: { LOOP_KEY: 'k' },
  });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout).toBe('The note says: the launch is on Tuesday\n');
});

it('a config approvals key that is not JSON-expressible is refused (exit 2)', async () => {
  const bad = join(workspace, 'bad.json');
  await writeFile(
    bad,
    JSON.stringify({
      models: [{ id: 'loop', baseURL: model.baseURL, models: ['m'] }],
      agent: { model: { provider: 'loop', model: 'm' } },
      approvals: { policy: 'allow' },
    }),
  );
  const result = await runCli(['run', '--config', bad, '--prompt', 'x']);
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/approvals/);
});
