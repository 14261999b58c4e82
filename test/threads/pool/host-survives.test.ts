/**
 * The host survives every worker-level event. A pool thread that dies while it
 * runs no task is reported as a runtime diagnostic (the next run starts a new thread); the worker entry loads without
 * require(esm); heap limits too small to boot a thread are refused up front.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood, moduleAdapter, scriptedModels } from '../../../src/index.js';
import { locateWorkerEntry } from '../../../src/pool/worker-runner.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';

const strayModels = [
  moduleAdapter({
    id: 'stray',
    models: ['m'],
    moduleUrl: new URL('./fixtures/stray-fault-adapter.mjs', import.meta.url),
  }),
];
const strayRoute = { provider: 'stray', model: 'm' };

let brood: Brood | undefined;
let dir: string | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

it.each(['throw', 'oom'] as const)(
  'a thread that dies between tasks (%s) is a diagnostic; the runtime keeps running and closes',
  async (kind) => {
    dir = mkdtempSync(join(tmpdir(), 'brood-stray-'));
    const flag = join(dir, 'fire');
    let reported!: (message: string) => void;
    const diagnostic = new Promise<string>((resolve) => (reported = resolve));
    brood = createBrood({
      models: strayModels,
      pool: { threads: 1, resourceLimits: { maxOldGenerationSizeMb: 48 } },
      onDiagnostic: (message) => reported(message),
    });
    const agent = await brood.createAgent({ model: strayRoute });
    expect(await agent.run(`stray ${kind} ${flag}`)).toMatchObject({ stopReason: 'completed' });
    await agent.whenIdle();
    writeFileSync(flag, ''); // the thread now runs no task; its stray timer fires
    const message = await diagnostic;
    expect(message).toContain('died while running no driver task');
    if (kind === 'oom') expect(message).toContain('out of memory');
    // A new thread starts for the next run: the same agent runs again, and the runtime closes normally.
    expect(await agent.run('again')).toMatchObject({ stopReason: 'completed', output: 'answered: again' });
    await brood.close();
  },
);

it('a throwing onDiagnostic callback is contained', async () => {
  dir = mkdtempSync(join(tmpdir(), 'brood-stray-'));
  const flag = join(dir, 'fire');
  let calls = 0;
  let reported!: () => void;
  const seen = new Promise<void>((resolve) => (reported = resolve));
  brood = createBrood({
    models: strayModels,
    pool: { threads: 1 },
    onDiagnostic: () => {
      calls += 1;
      reported();
      throw new Error('host logger broke');
    },
  });
  const agent = await brood.createAgent({ model: strayRoute });
  await agent.run(`stray throw ${flag}`);
  await agent.whenIdle();
  writeFileSync(flag, '');
  await seen;
  expect(calls).toBe(1);
  expect(await agent.run('again')).toMatchObject({ stopReason: 'completed' });
});

it('a thread a driver kills is that driver\'s failure, not also a "no driver task" diagnostic', async () => {
  const diagnostics: string[] = [];
  brood = createBrood({
    pool: { threads: 1 },
    onDiagnostic: (message) => diagnostics.push(message),
    models: [scriptedModels({ id: 'scripted', scripts: [{ match: 'faulty', turns: [{ fault: 'throw' }] }] })],
  });
  const agent = await brood.createAgent({ model: route });
  expect(await agent.run('faulty')).toMatchObject({ stopReason: 'error' });
  // The replacement thread runs the next turn; by then any report of the death has been made.
  expect(await agent.run('after')).toMatchObject({ stopReason: 'completed' });
  expect(diagnostics).toEqual([]);
});

it('the worker entry piscina loads is CommonJS: it loads even with require(esm) disabled', () => {
  const entry = locateWorkerEntry();
  expect(entry.endsWith('.cjs')).toBe(true);
  const script = `const m = require(${JSON.stringify(entry)}); process.exit(typeof m.default === 'function' ? 0 : 3);`;
  const child = spawnSync(process.execPath, ['--no-experimental-require-module', '-e', script], { encoding: 'utf8' });
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
});

it.each([1, 8, 31])(
  'pool.resourceLimits.maxOldGenerationSizeMb %i is refused with INVALID_CONFIG naming the minimum',
  (mb) => {
    const error = expectCode(
      () => createBrood({ pool: { resourceLimits: { maxOldGenerationSizeMb: mb } } }),
      'INVALID_CONFIG',
    );
    expect(error.details?.keys).toEqual(['pool.resourceLimits.maxOldGenerationSizeMb']);
    expect(error.message).toContain('at least 32');
  },
);

it('the documented minimum heap (32 MB) boots a thread that runs a turn', async () => {
  brood = createBrood({ pool: { threads: 1, resourceLimits: { maxOldGenerationSizeMb: 32 } } });
  const agent = await brood.createAgent({ model: route });
  expect(await agent.run('small heap')).toMatchObject({ stopReason: 'completed', output: 'small heap' });
});
