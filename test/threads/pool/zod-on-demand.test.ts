/**
 * A pool thread boots and runs ordinary activations without evaluating zod (tsup.config.ts,
 * `zodOnDemand`; schemas built on first use, src/util/lazy.ts): zod was the largest part of every thread's
 * boot, yet a thread needs it only to word a rejection. A rejection is still worded, and zod loads then.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { defineTool, moduleAdapter, openAICompatible, scriptedModels } from '../../../src/index.js';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { makeBrood } from '../../support/runtime.js';

const probe = moduleAdapter({
  id: 'probe',
  models: ['m'],
  moduleUrl: new URL('./fixtures/zod-probe-adapter.mjs', import.meta.url),
});
const scripted = scriptedModels({
  id: 'scripted',
  scripts: [{ match: 'use the tool', turns: [{ toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }] }] }],
});
const echo = defineTool({
  name: 'echo',
  description: 'returns its word',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  execute: ({ word }) => String(word),
});

let http: LoopbackModel;
beforeAll(async () => {
  http = await startLoopbackModel({
    toolCall: { name: 'echo', arguments: { word: 'hi' } },
    answer: (tool) => `got ${tool}`,
  });
});
afterAll(() => http.close());

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** One runtime whose single pool thread runs every agent, so each probe sees what ran before it. */
function oneThread(): Brood {
  const openai = openAICompatible({ id: 'openai', baseURL: http.baseURL, models: ['gpt'] });
  const created = makeBrood('worker', { models: [scripted, openai, probe], pool: { threads: 1 } });
  created.tools.register(echo);
  return created;
}

const MODEL_OF: Record<string, string> = { probe: 'm', openai: 'gpt' };

async function runOnce(runtime: Brood, provider: string, prompt: string) {
  const agent = await runtime.createAgent({ model: { provider, model: MODEL_OF[provider] ?? provider } });
  try {
    return await agent.run(prompt);
  } finally {
    await agent.dispose();
  }
}

describe("runner: 'worker'", () => {
  it('a thread that ran ordinary turns (scripted, HTTP, tool calls, a custom adapter) has not evaluated zod', async () => {
    brood = oneThread();
    expect((await runOnce(brood, 'scripted', 'use the tool')).stopReason).toBe('completed');
    expect((await runOnce(brood, 'openai', 'use the tool')).output).toBe('got hi');
    expect((await runOnce(brood, 'probe', 'first')).output).toBe('zod evaluated: false');
    expect((await runOnce(brood, 'probe', 'again')).output).toBe('zod evaluated: false');
  });

  it('a malformed model response is still refused with the worded reason, and zod is evaluated then', async () => {
    brood = oneThread();
    const refused = await runOnce(brood, 'probe', 'malformed');
    expect(refused.stopReason).toBe('error');
    expect(refused.diagnostic).toMatch(/malformed response: usage\.inputTokens/);
    expect((await runOnce(brood, 'probe', 'after')).output).toBe('zod evaluated: true');
  });
});
