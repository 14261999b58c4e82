/** SPEC §11.9: model-selection fields, route validation, settings-controlled visibility, discovery. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/brood.js';
import { subagentTool } from '../../../src/delegation/index.js';
import { scriptedModels } from '../../../src/models/scripted.js';
import { eventsOf, ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { behaviourBrood } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const models = () => [
  scriptedModels({
    id: 'scripted',
    scripts: [
      {
        match: 'pick a model',
        turns: [
          {
            toolCalls: [
              {
                name: 'subagent',
                arguments: {
                  description: 'think hard',
                  prompt: 'deep thought',
                  provider: 'other',
                  model: 'thinker',
                  reasoning_effort: 'high',
                },
              },
            ],
          },
          { text: '{{results}}' },
        ],
      },
    ],
  }),
  scriptedModels({
    id: 'other',
    name: 'Other Models',
    models: ['big', { id: 'thinker', efforts: ['low', 'high'], defaultEffort: 'low' }],
  }),
];

const fieldsOf = (schema: { parameters: Record<string, unknown> } | undefined) =>
  Object.keys((schema?.parameters.properties ?? {}) as object);

describe('enableModelSelection', () => {
  it('a child runs on the selected provider/model and its model/request shows it', async () => {
    brood = behaviourBrood({ models: models() });
    brood.use(subagentTool({ provider: 'spawn', enableModelSelection: true }));
    const parent = await brood.createAgent({ model: route });
    const result = await parent.run('pick a model');
    expect(result.output).toBe('deep thought');
    const child = (await brood.sessions.list()).find((h) => h.parentSession === parent.id)!;
    const [request] = ofType(await eventsOf(brood, child.id), 'model/request');
    expect(request?.data).toMatchObject({ provider: 'other', model: 'thinker', reasoningEffort: 'high' });
    const [parentRequest] = ofType(await eventsOf(brood, parent.id), 'model/request');
    expect(parentRequest?.data).toMatchObject({ provider: 'scripted', model: 'scripted' });
  });

  it('validates the route before any child exists (UNKNOWN_MODEL, INVALID_EFFORT) and pairs provider with model', async () => {
    brood = behaviourBrood({ models: models() });
    brood.use(subagentTool({ provider: 'spawn', enableModelSelection: true }));
    const parent = await brood.createAgent({ model: route });
    const run = (extra: Record<string, unknown>) =>
      parent.tools.execute({ name: 'subagent', arguments: { description: 'd', prompt: 'p', ...extra } });
    expect((await run({ provider: 'other', model: 'missing' })).error?.code).toBe('UNKNOWN_MODEL');
    expect((await run({ provider: 'other', model: 'thinker', reasoning_effort: 'max' })).error?.code).toBe(
      'INVALID_EFFORT',
    );
    expect((await run({ provider: 'other' })).error?.code).toBe('INVALID_ARGS');
    expect((await brood.sessions.list()).filter((h) => h.origin === 'subagent')).toHaveLength(0);
    expect((await run({ provider: 'other', model: 'big' })).isError).toBe(false);
  });

  it("list_subagent_models lists providers, models, and one model's efforts", async () => {
    brood = behaviourBrood({ models: models() });
    brood.use(subagentTool({ provider: 'spawn', enableModelSelection: true }));
    const parent = await brood.createAgent({ model: route });
    const list = (args: Record<string, unknown>) =>
      parent.tools.execute({ name: 'list_subagent_models', arguments: args });
    expect((await list({})).content).toBe('scripted — scripted\nother — Other Models');
    expect((await list({ provider: 'other' })).content).toBe('big\nthinker');
    expect((await list({ provider: 'other', model: 'thinker' })).content).toBe('efforts: low, high\ndefault: low');
    expect((await list({ provider: 'nope' })).error?.code).toBe('UNKNOWN_MODEL');
    expect((await list({ model: 'thinker' })).error?.code).toBe('INVALID_ARGS');
  });

  it('the schema never changes when nothing changes (prefix stability)', async () => {
    brood = behaviourBrood({ models: models() });
    brood.use(subagentTool({ provider: 'spawn', enableModelSelection: true }));
    const agent = await brood.createAgent({ model: route });
    const first = JSON.stringify(agent.tools.view().schemas);
    expect(JSON.stringify(agent.tools.view().schemas)).toBe(first);
    expect(fieldsOf(agent.tools.view().schemas.find((s) => s.name === 'subagent'))).toEqual([
      'description',
      'prompt',
      'run_in_background',
      'provider',
      'model',
      'reasoning_effort',
    ]);
  });
});

describe('modelSelectionSettings', () => {
  it('only agents whose session decision is enabled see the fields and list_subagent_models', async () => {
    let enabled = true;
    brood = behaviourBrood({
      models: models(),
      preferences: { get: (key) => (key === 'subagent-model-selection.enabled' ? enabled : undefined) },
    });
    brood.use(subagentTool({ provider: 'spawn', modelSelectionSettings: true }));
    const chosen = await brood.createAgent({ model: route });
    enabled = false;
    const plain = await brood.createAgent({ model: route });
    const subagentSchema = (agent: typeof chosen) => agent.tools.view().schemas.find((s) => s.name === 'subagent');
    expect(fieldsOf(subagentSchema(chosen))).toContain('reasoning_effort');
    expect(chosen.tools.view().names).toContain('list_subagent_models');
    expect(fieldsOf(subagentSchema(plain))).toEqual(['description', 'prompt', 'run_in_background']);
    expect(plain.tools.view().names).not.toContain('list_subagent_models');
    const forced = await plain.tools.execute({
      name: 'subagent',
      arguments: { description: 'd', prompt: 'p', provider: 'other', model: 'big' },
    });
    expect(forced.error?.code).toBe('INVALID_ARGS');
    const picked = await chosen.tools.execute({
      name: 'subagent',
      arguments: { description: 'd', prompt: 'p', provider: 'other', model: 'big' },
    });
    expect(picked.isError).toBe(false);
  });
});
