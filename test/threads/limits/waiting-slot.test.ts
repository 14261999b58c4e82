/**
 * limits.agents on real pool threads while an agent waits outside its turn: a call parked on the
 * host's answer lends out its agent's turn slot, so unanswered approvals never stop the runtime, and
 * the answer is applied once the agent holds a slot again; a host tool that runs another top-level
 * agent and waits for it does not deadlock under `agents: 1`.
 */
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { type Brood, defineTool, scriptedModels } from '../../../src/index.js';
import { route } from '../../support/route.js';
import { workerBrood } from '../../support/runtime.js';
import { until } from '../../support/until.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function governed(): { brood: Brood; runs: string[]; hold: { readonly started: boolean; finish(): void } } {
  const runs: string[] = [];
  const b = workerBrood({
    limits: { agents: 1 },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'deploy',
            turns: [{ toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] }, { text: 'done: {{results}}' }],
          },
          { match: 'hello', turns: [{ text: 'hi' }] },
          {
            match: 'consult',
            turns: [{ toolCalls: [{ name: 'consult', arguments: {} }] }, { text: 'got {{results}}' }],
          },
          { match: 'hold', turns: [{ toolCalls: [{ name: 'hold', arguments: {} }] }, { text: 'held' }] },
        ],
      }),
    ],
  });
  b.tools.register(
    defineTool({
      name: 'deploy',
      description: 'Deploy a service',
      parameters: z.object({ service: z.string() }),
      approval: 'ask',
      execute: ({ service }) => {
        runs.push(service);
        return `deployed ${service}`;
      },
    }),
  );
  brood = b;
  return { brood: b, runs, hold: holdTool(b) };
}

it('limits.agents: 1 — an agent parked on an approval holds no slot: another runs to completion meanwhile', async () => {
  const { brood: b, runs } = governed();
  const parked = await b.createAgent({ model: route });
  const other = await b.createAgent({ model: route });
  const deploying = parked.run('deploy');
  await until(() => b.approvals.pending().length === 1);
  expect(b.scheduler.stats().running).toBe(0);

  const greeting = await other.run('hello');
  expect(greeting).toMatchObject({ stopReason: 'completed', output: 'hi' });
  expect(runs).toEqual([]);

  await b.approvals.respond(b.approvals.pending()[0]!.approvalId, { approve: true });
  const result = await deploying;
  expect(result.stopReason).toBe('completed');
  expect(result.output).toContain('deployed api');
  expect(runs).toEqual(['api']);
  // Its activation ends after its result is out: then nothing holds a slot (none was leaked or lent twice).
  await until(() => b.scheduler.stats().running === 0);
  expect(b.scheduler.stats().queued).toBe(0);
});

it('an answered approval waits for a slot before its call runs: the agent holding it finishes first', async () => {
  const { brood: b, runs, hold } = governed();
  const parked = await b.createAgent({ model: route });
  const deploying = parked.run('deploy');
  await until(() => b.approvals.pending().length === 1);
  // Another agent takes the only slot and holds it (its tool call runs) while the host answers.
  const holder = await b.createAgent({ model: route });
  const holding = holder.run('hold');
  await until(() => hold.started);
  await b.approvals.respond(b.approvals.pending()[0]!.approvalId, { approve: true });
  await until(() => b.scheduler.stats().queued === 1);
  expect(runs).toEqual([]); // approved, but not run before its agent holds a slot again
  hold.finish();
  expect((await holding).stopReason).toBe('completed');
  expect((await deploying).output).toContain('deployed api');
  expect(runs).toEqual(['api']);
});

/** A tool `hold` whose call holds its agent's turn (and slot) until `finish()`. */
function holdTool(b: Brood): { readonly started: boolean; finish(): void } {
  let finish = (): void => {};
  const state = { started: false, finish: () => finish() };
  b.tools.register(
    defineTool({
      name: 'hold',
      description: 'Holds the turn',
      parameters: z.object({}),
      execute: () => {
        state.started = true;
        return new Promise<string>((resolve) => (finish = () => resolve('released')));
      },
    }),
  );
  return state;
}

it('limits.agents: 1 — a host tool that runs another top-level agent and waits for it does not deadlock', async () => {
  const { brood: b } = governed();
  const helper = await b.createAgent({ model: route });
  b.tools.register(
    defineTool({
      name: 'consult',
      description: 'Asks the helper agent',
      parameters: z.object({}),
      execute: async () => {
        await Promise.resolve(); // the helper's run starts after an await, as host code's often does
        return (await helper.run('hello')).output;
      },
    }),
  );
  const caller = await b.createAgent({ model: route });
  const result = await caller.run('consult');
  expect(result).toMatchObject({ stopReason: 'completed' });
  expect(result.output).toContain('got hi');
  await until(() => b.scheduler.stats().running === 0);
});
