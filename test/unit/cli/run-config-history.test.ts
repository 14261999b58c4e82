/**
 * `brood run`'s config takes createAgent's options, but not `history`: a conversation belongs to a
 * request, not to a config file. The key is refused like any unknown key (a usage error naming it).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/cli-errors.js';
import { loadRunConfig } from '../../../src/cli/run-config.js';

it("a config's agent with a history is a usage error naming agent.history", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'brood-run-config-'));
  try {
    const file = join(dir, 'agent.json');
    const agent = { model: { provider: 'oa', model: 'gpt-x' }, history: [{ role: 'user', content: 'hi' }] };
    await writeFile(
      file,
      JSON.stringify({ models: [{ id: 'oa', baseURL: 'http://127.0.0.1:9/v1', models: ['gpt-x'] }], agent }),
    );
    const error = await loadRunConfig(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(/agent.*history/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
