/**
 * A driver's thread is not trusted (docs/reliability.md): whatever it sends over its link, it cannot
 * act outside its own agent. A thread whose code has been taken over (here a model adapter that
 * patches the thread's port) sends comlink messages that no driver host sends, addressed to its own
 * activation: a SET along a property path to the parent's Object.prototype, a GET of a function, a
 * CONSTRUCT, APPLYs of names that are not gateway methods. None of them reaches anything in the
 * parent: nothing is written, the link keeps working, the run completes and the runtime runs on.
 */
import { afterEach, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood, moduleAdapter } from '../../../src/index.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  delete (Object.prototype as Record<string, unknown>).broodPolluted;
});

it("a driver's thread that sends forged comlink messages changes nothing in the parent", async () => {
  const diagnostics: string[] = [];
  brood = createBrood({
    models: [
      moduleAdapter({
        id: 'forger',
        models: ['m'],
        moduleUrl: new URL('./fixtures/forged-rpc-adapter.mjs', import.meta.url),
      }),
    ],
    pool: { threads: 1 },
    onDiagnostic: (message) => diagnostics.push(message),
  });
  const agent = await brood.createAgent({ model: { provider: 'forger', model: 'm' } });
  // Answered before the thread's first batch left, with the forged messages in it.
  expect(await agent.run('first')).toMatchObject({ stopReason: 'completed', output: 'answered: first (forged 0)' });
  expect(Object.hasOwn(Object.prototype, 'broodPolluted')).toBe(false);
  expect(({} as Record<string, unknown>).broodPolluted).toBeUndefined();
  // The link and the thread are unharmed: the same agent runs again on them.
  expect(await agent.run('second')).toMatchObject({ stopReason: 'completed', output: 'answered: second (forged 8)' });
  expect(diagnostics).toEqual([]);
});
