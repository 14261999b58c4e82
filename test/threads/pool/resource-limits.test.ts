/**
 * Pool threads' V8 limits: by default a capped old generation and a small young generation (a
 * thread's semi-spaces would otherwise grow to V8's 16 MB each under a wide fan-out's burst and stay
 * there, most of the RSS the fan-out cost); `pool.resourceLimits`, when given, is what threads get.
 */
import { afterEach, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/index.js';
import { moduleAdapter } from '../../../src/index.js';
import { makeBrood } from '../../support/runtime.js';

const probe = moduleAdapter({
  id: 'probe',
  models: ['m'],
  moduleUrl: new URL('./fixtures/limits-probe-adapter.mjs', import.meta.url),
});

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

async function threadLimits(pool: BroodOptions['pool']): Promise<Record<string, number>> {
  brood = makeBrood('worker', { models: [probe], pool: { threads: 1, ...pool } });
  const agent = await brood.createAgent({ model: { provider: 'probe', model: 'm' } });
  const result = await agent.run('limits?');
  await agent.dispose();
  return JSON.parse(result.output);
}

it('a pool thread runs with a 1,024 MB old generation and a 6 MB young generation by default', async () => {
  const limits = await threadLimits({});
  expect(limits.maxOldGenerationSizeMb).toBe(1024);
  expect(limits.maxYoungGenerationSizeMb).toBe(6);
});

it('pool.resourceLimits, when given, is what each thread gets', async () => {
  const limits = await threadLimits({ resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 24 } });
  expect(limits.maxOldGenerationSizeMb).toBe(256);
  expect(limits.maxYoungGenerationSizeMb).toBe(24);
});
