/**
 * SPEC §4.5 / §10.3 through the runtime: registry changes reach the agent before its next model
 * request, a removed tool can neither be presented nor executed, and creation options (toolFilter,
 * persona) shape the very first request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood, ToolDefinition } from '../../../src/index.js';
import { defineTool, scriptedModels } from '../../../src/index.js';
import { eventsOf, ofType, turnEvents } from '../../support/events.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function countingTool(name: string, runs: string[]): ToolDefinition {
  return defineTool({
    name,
    description: `tool ${name}`,
    parameters: z.object({}),
    execute: () => {
      runs.push(name);
      return `${name} ran`;
    },
  });
}

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('a tool registered while idle is presented next; a removed one disappears and a forged call to it is UNKNOWN_TOOL', async () => {
    brood = makeBrood(runner, {
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'live',
              turns: [
                { text: 'one' },
                { text: 'two' },
                { toolCalls: [{ name: 'late', arguments: {} }] },
                { text: '{{results}}' },
              ],
            },
          ],
        }),
      ],
    });
    const runs: string[] = [];
    brood.tools.register(countingTool('base', runs));
    const agent = await brood.createAgent({ model: route });
    await agent.run('live one');
    const removeLate = brood.tools.register(countingTool('late', runs));
    await agent.run('live two');
    removeLate();
    const forged = await agent.run('live three');

    const events = await eventsOf(brood, agent.id);
    const toolsOf = (turn: number) => ofType(turnEvents(events, turn), 'model/request').map((e) => e.data.tools);
    expect(toolsOf(1)).toEqual([['base']]);
    expect(toolsOf(2)).toEqual([['base', 'late']]);
    expect(toolsOf(3)).toEqual([['base'], ['base']]);
    const [result] = ofType(turnEvents(events, 3), 'tool/result');
    expect(result?.data).toMatchObject({ name: 'late', isError: true, errorCode: 'UNKNOWN_TOOL' });
    expect(runs).toEqual([]);
    expect(forged.stopReason).toBe('completed');
  });

  it("a tool registered by a running turn reaches that turn's next model request", async () => {
    brood = makeBrood(runner, {
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'grow',
              turns: [
                { toolCalls: [{ name: 'install', arguments: {} }] },
                { toolCalls: [{ name: 'fresh', arguments: {} }] },
                { text: '{{results}}' },
              ],
            },
          ],
        }),
      ],
    });
    const runs: string[] = [];
    brood.tools.register(
      defineTool({
        name: 'install',
        description: 'registers another tool',
        parameters: z.object({}),
        execute: (_args, ctx) => {
          ctx.agent?.tools.register(countingTool('fresh', runs));
          return 'installed';
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    const result = await agent.run('grow tools');

    expect(result).toMatchObject({ stopReason: 'completed', output: 'fresh ran' });
    expect(runs).toEqual(['fresh']);
    const requests = ofType(await eventsOf(brood, agent.id), 'model/request');
    expect(requests.map((e) => e.data.tools)).toEqual([['install'], ['fresh', 'install'], ['fresh', 'install']]);
  });

  it('toolFilter shapes the first request and a persona appears in model/request.system', async () => {
    brood = makeBrood(runner, {
      persona: 'Deployment persona.',
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            { match: 'filtered', turns: [{ toolCalls: [{ name: 'gamma', arguments: {} }] }, { text: 'done' }] },
          ],
        }),
      ],
    });
    const runs: string[] = [];
    for (const name of ['alpha', 'beta', 'gamma']) brood.tools.register(countingTool(name, runs));
    const agent = await brood.createAgent({
      model: route,
      toolFilter: { allow: ['alpha', 'gamma'], deny: ['gamma'] },
      persona: 'You are agent {{agent_id}} at depth {{depth}}.',
    });
    await agent.run('filtered run');

    const events = await eventsOf(brood, agent.id);
    const [first] = ofType(events, 'model/request');
    expect(first?.data.tools).toEqual(['alpha']);
    expect(first?.data.system).toBe(`You are agent ${agent.id} at depth 0.`);
    // Hidden from the schema means hidden from execution too (one resolver).
    expect(ofType(events, 'tool/result')[0]?.data.errorCode).toBe('UNKNOWN_TOOL');
    expect(runs).toEqual([]);

    // An agent without its own persona gets the deployment's.
    const plain = await brood.createAgent({ model: route });
    await plain.run('filtered too');
    expect(ofType(await eventsOf(brood, plain.id), 'model/request')[0]?.data).toMatchObject({
      system: 'Deployment persona.',
      tools: ['alpha', 'beta', 'gamma'],
    });
  });
});
