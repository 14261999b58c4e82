/** Every file in examples/ runs: the offline ones directly, the OpenAI config through `brood run` on a loopback endpoint. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackModel } from '../../support/loopback-model.js';
import { assertBuilt, ROOT, runCli, runNode } from '../../support/run-cli.js';

beforeAll(() => assertBuilt());

describe('examples', () => {
  it('embedding.mjs: parallel children call a host tool; the lead compares their answers', async () => {
    const result = await runNode([join(ROOT, 'examples/embedding.mjs')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Comparison:\nLyon: 522000\nGraz: 291000');
    expect(result.stdout.match(/^start sub_\S+ depth 1/gm)).toHaveLength(2);
    expect(result.stdout).toMatch(/stop: completed; usage \(incl\. children\): \d+ in \/ \d+ out/);
    expect(result.stdout).toContain('sessions: 3');
  });

  it('progress-ui.mjs: the event stream drives a progress UI — child runs inside the lead, the answer streamed', async () => {
    const result = await runNode([join(ROOT, 'examples/progress-ui.mjs')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('Asking two helpers.');
    expect(lines.filter((line) => line === '▶ foreground child started')).toHaveLength(2);
    expect(lines.filter((line) => /^■ child completed \(\d+ tokens out\)$/.test(line))).toHaveLength(2);
    expect(lines).toContain('· subagent "trains"');
    // Every child run starts after its delegation call and ends before the lead's final answer.
    expect(lines.indexOf('· subagent "trains"')).toBeLessThan(lines.indexOf('▶ foreground child started'));
    expect(lines.lastIndexOf('■ child completed (7 tokens out)')).toBeLessThan(
      lines.findIndex((line) => line.startsWith('Plan: ')),
    );
    expect(result.stdout).toContain('Plan: found Find trains in Lyon\nfound Find museums in Lyon\n');
    expect(lines.at(-2)).toBe('lead completed');
  });

  it('custom-provider.mjs: a provider advertising no capabilities works and refuses what it cannot enforce', async () => {
    const result = await runNode([join(ROOT, 'examples/custom-provider.mjs')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Lead got: remote answer to "Check the plan"');
    expect(result.stdout).toContain('direct: completed: remote answer to "Summarize the plan"');
    expect(result.stdout).toContain('persona request: UNSUPPORTED_CAPABILITY');
    expect(result.stdout).toContain('numeric maxDepth on this provider: INVALID_CONFIG');
  });

  it('openai-config.json: runs through `brood run` with only baseURL pointed at a loopback endpoint', async () => {
    const model = await startLoopbackModel({
      toolCall: { name: 'read_file', arguments: { path: 'README.md' } },
      answer: (tool) => `Summary: ${tool}`,
    });
    const workspace = await mkdtemp(join(tmpdir(), 'brood-example-'));
    try {
      const config = JSON.parse(await readFile(join(ROOT, 'examples/openai-config.json'), 'utf8'));
      config.models[0].baseURL = model.baseURL;
      await writeFile(join(workspace, 'config.json'), JSON.stringify(config));
      await writeFile(join(workspace, 'README.md'), 'A tiny project.');
      const result = await runCli(['run', '--config', join(workspace, 'config.json')], {
        env: { OPENAI_API_KEY: 'sk-example' },
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('Summary: A tiny project.\n');
      const first = model.requests[0]!;
      expect(first.headers.authorization).toBe('Bearer sk-example');
      expect(first.body.model).toBe('gpt-4o-mini');
      expect(first.body.messages[0]).toMatchObject({
        role: 'system',
        content: expect.stringContaining('careful research assistant'),
      });
      expect(first.body.tools?.map((t) => t.function.name).sort()).toEqual([
        'http_get',
        'list_dir',
        'read_file',
        'subagent',
      ]);
    } finally {
      await model.close();
      await rm(workspace, { recursive: true, force: true });
    }
  });
});
