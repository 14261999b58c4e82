/**
 * A plan's view crosses to a pool thread once and the thread's drivers with the same view share it
 * (src/wire/view-numbers.ts). Each driver still sees exactly its own agent's view: agents that share
 * a view, agents whose views differ, more distinct views than a link keeps numbers for, and an agent
 * whose view changed between its turns.
 */
import { afterEach, expect, it } from 'vitest';
import type { Agent, Brood } from '../../../src/index.js';
import { defineTool, moduleAdapter } from '../../../src/index.js';
import { makeBrood } from '../../support/runtime.js';

const echo = moduleAdapter({
  id: 'echo',
  models: ['m'],
  moduleUrl: new URL('./fixtures/view-echo-adapter.mjs', import.meta.url),
});

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

async function agentWithPrompt(runtime: Brood, text: string | undefined): Promise<Agent> {
  const agent = await runtime.createAgent({ model: { provider: 'echo', model: 'm' } });
  if (text !== undefined) agent.prompt.register({ name: 'who', text });
  return agent;
}

async function seenView(agent: Agent): Promise<{ system: string; tools: string[] }> {
  const result = await agent.run('which view?');
  expect(result.stopReason).toBe('completed');
  return JSON.parse(result.output);
}

it('every driver on a thread sees its own view, over more distinct views than a link numbers', async () => {
  brood = makeBrood('worker', { models: [echo], pool: { threads: 1 } });
  // 40 agents with a view of their own and 20 with the runtime's; two rounds so numbers are reused.
  const prompts = Array.from({ length: 60 }, (_, i) => (i % 3 === 2 ? undefined : `you are agent ${i}`));
  const agents = await Promise.all(prompts.map((text) => agentWithPrompt(brood as Brood, text)));
  for (let round = 0; round < 2; round++) {
    const views = await Promise.all(agents.map(seenView));
    views.forEach((view, i) => {
      if (prompts[i] === undefined) expect(view.system).not.toContain('you are agent');
      else expect(view.system).toContain(prompts[i]);
    });
  }
  await Promise.all(agents.map((agent) => agent.dispose()));
});

it("an agent's next activation on the same thread sees its view as it is now", async () => {
  brood = makeBrood('worker', { models: [echo], pool: { threads: 1 } });
  const agent = await agentWithPrompt(brood, 'you are the first');
  expect((await seenView(agent)).tools).not.toContain('lookup');
  agent.tools.register(
    defineTool({ name: 'lookup', description: 'looks up', parameters: { type: 'object' }, execute: () => 'ok' }),
  );
  expect((await seenView(agent)).tools).toContain('lookup');
  await agent.dispose();
});
