/**
 * Bad input, fuzzed with fast-check: whatever a host passes, brood answers with success or a BroodError
 * carrying a specific code — never a TypeError, never a synchronous throw from an async entry point,
 * never a hang — and a failed call leaves nothing behind.
 * - subagentTool config through brood.use → success or INVALID_CONFIG; a failed use changes no tool
 *   name, no prompt section, and reserves nothing (a probe instance can take every name afterwards);
 * - SubagentStartRequest fields through brood.subagents.start → a run or a specific code, no session
 *   on failure;
 * - ToolFilter through createAgent → an agent or INVALID_TOOL_FILTER / INVALID_CONFIG, no session on failure;
 * - persona templates through createAgent → an agent or TEMPLATE_ERROR.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Agent, Brood, SubagentToolConfig } from '../../../src/index.js';
import { BroodError, createBrood, defineTool, scriptedModels, subagentTool } from '../../../src/index.js';
import { withTimeout } from '../../support/lifecycle.js';
import { route } from '../../support/route.js';

let brood: Brood;
let parent: Agent;

beforeAll(async () => {
  brood = createBrood({
    pool: { threads: 1 },
    models: [
      scriptedModels({ id: 'scripted', models: [{ id: 'scripted', efforts: ['low', 'high'], defaultEffort: 'low' }] }),
    ],
  });
  for (const name of ['alpha', 'beta', 'gamma']) {
    brood.tools.register(
      defineTool({ name, description: name, parameters: { type: 'object', properties: {} }, execute: () => name }),
    );
  }
  parent = await brood.createAgent({ id: 'fuzz-parent', model: route });
});
afterAll(async () => {
  await brood.close();
});

/** A value that is usually sensible and sometimes anything at all. */
const sometimes = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 5, arbitrary: good }, { weight: 1, arbitrary: fc.anything() });
const goodNames = fc.constantFrom('alpha', 'beta', 'gamma');
const badNames = fc.constantFrom('subagent', 'run_code', 'nope', '', 'ALPHA');
const filter = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.oneof(
      fc.record({ allow: fc.array(goodNames, { maxLength: 3 }) }),
      fc.record({ deny: fc.array(goodNames, { maxLength: 3 }) }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      { allow: fc.array(fc.oneof(goodNames, badNames), { maxLength: 3 }), deny: fc.array(badNames, { maxLength: 2 }) },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.anything(), fc.record({ allow: fc.anything(), extra: fc.anything() }, { requiredKeys: [] })),
  },
);
const depth = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 6 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      -1,
      -0,
      0.5,
      Number.NaN,
      Infinity,
      -Infinity,
      2 ** 53,
      '2',
      'provider-managed',
      null,
      true,
    ),
  },
);
const templateText = fc.oneof(
  fc.constantFrom(
    'Hello {{agent_id}} at {{depth}}',
    'on {{provider}}/{{model}}',
    '',
    'lone {{ brace',
    '{{nope}}',
    '{{ x }}',
    '{{}}',
    '{{{x}}}',
    '{{Agent}}',
  ),
  fc
    .array(fc.constantFrom('{{', '}}', 'agent_id', 'depth', 'nope', 'x', ' ', '{', '}', 'Hello ', '\n'), {
      maxLength: 6,
    })
    .map((parts) => parts.join('')),
);
const agentOptions = fc.record(
  {
    provider: sometimes(fc.constantFrom('scripted', 'scripted', 'other', '')),
    model: sometimes(fc.constantFrom('scripted', 'scripted', 'gpt-x', '')),
    reasoningEffort: sometimes(fc.constantFrom('low', 'high', 'extreme', '')),
    maxTokens: sometimes(
      fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom(0, -1, 0.5, Number.NaN, 2 ** 60)),
    ),
  },
  { requiredKeys: [] },
);
/** Sometimes an extra, unknown key. */
const stray = fc.oneof(
  { weight: 5, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.record({ unexpected: fc.anything() }) },
);

function snapshot(): { tools: string[]; sections: string[] } {
  return { tools: brood.tools.view().names, sections: brood.prompt.assemble().sections.map((s) => s.name) };
}

it('subagentTool config: use() succeeds or throws INVALID_CONFIG, and a failed use leaves nothing behind', () => {
  const config = fc.record(
    {
      provider: sometimes(fc.constantFrom('spawn', 'fork', 'absent-provider', '')),
      toolName: sometimes(
        fc.constantFrom(
          'subagent',
          'delegate_2',
          'bad name',
          'x'.repeat(65),
          'alpha',
          'job_output',
          'list_subagent_models',
          '',
        ),
      ),
      enableModelSelection: sometimes(fc.boolean()),
      modelSelectionSettings: sometimes(fc.boolean()),
      enableRunInBackground: sometimes(fc.boolean()),
      backgroundMode: sometimes(fc.constantFrom('one-shot', 'continuable', 'forever')),
      agentOptions: sometimes(agentOptions),
      persona: sometimes(templateText),
      toolFilter: filter,
      maxDepth: depth,
    },
    { requiredKeys: [] },
  );
  let failures = 0;
  let successes = 0;
  fc.assert(
    fc.property(config, stray, (fields, extra) => {
      const raw = { ...fields, ...extra };
      const before = snapshot();
      let dispose: (() => void) | undefined;
      try {
        dispose = brood.use(subagentTool(raw as SubagentToolConfig));
      } catch (error) {
        expect(error).toBeInstanceOf(BroodError);
        expect(error).toMatchObject({ code: 'INVALID_CONFIG' });
        failures += 1;
        expect(snapshot()).toEqual(before);
        // Nothing reserved: one probe instance can take the default name, model selection and a section.
        const probe = brood.use(
          subagentTool({ provider: 'spawn', enableModelSelection: true, backgroundMode: 'continuable' }),
        );
        expect(brood.tools.view().names).toContain('list_subagent_models');
        probe();
        expect(snapshot()).toEqual(before);
        return;
      }
      successes += 1;
      dispose();
      expect(snapshot()).toEqual(before);
    }),
    { numRuns: 150, seed: 0x5eed },
  );
  expect(failures).toBeGreaterThan(0);
  expect(successes).toBeGreaterThan(0);
});

const START_CODES = new Set([
  'NO_PROVIDER',
  'UNSUPPORTED_CAPABILITY',
  'INVALID_MAX_DEPTH',
  'INVALID_DEPTH',
  'DEPTH_EXCEEDED',
  'INVALID_TOOL_FILTER',
  'TEMPLATE_ERROR',
  'UNKNOWN_MODEL',
  'INVALID_EFFORT',
  'INVALID_CONFIG',
  'INVALID_ARGS',
]);

it('SubagentStartRequest fields: start() resolves a run or rejects with a specific BroodError, never throws or hangs', async () => {
  const request = fc.record(
    {
      parent: fc.oneof(
        { weight: 6, arbitrary: fc.constant('agent' as const) },
        { weight: 1, arbitrary: fc.anything() },
      ),
      prompt: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom('hello', '', 'x'.repeat(2000)) },
        { weight: 1, arbitrary: fc.anything() },
      ),
      label: fc.oneof({ weight: 8, arbitrary: fc.string({ maxLength: 10 }) }, { weight: 1, arbitrary: fc.anything() }),
      signal: fc.oneof(
        { weight: 6, arbitrary: fc.constant('signal' as const) },
        { weight: 1, arbitrary: fc.anything() },
      ),
      persona: sometimes(templateText),
      toolFilter: filter,
      maxDepth: depth,
      agentOptions: sometimes(agentOptions),
      outputSchema: sometimes(fc.constant({ type: 'object', properties: { a: { type: 'string' } } })),
    },
    { requiredKeys: ['parent', 'prompt', 'signal'] },
  );
  const provider = fc.constantFrom('spawn', 'fork', 'spawn', 'nope');
  const outcomes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(provider, request, stray, async (name, given, extra) => {
      const fields = { ...given, ...extra };
      const sessionsBefore = (await brood.sessions.list()).length;
      const req = {
        ...fields,
        parent: fields.parent === 'agent' ? parent : fields.parent,
        signal: fields.signal === 'signal' ? new AbortController().signal : fields.signal,
      };
      let pending: Promise<unknown>;
      try {
        pending = brood.subagents.start(name, req as never);
      } catch (error) {
        throw new Error(`start() threw synchronously: ${String(error)}`);
      }
      try {
        const run = (await withTimeout(pending, 10_000, 'start')) as {
          result: Promise<{ stopReason: string }>;
          dispose(): Promise<void>;
        };
        const result = await withTimeout(run.result, 10_000, 'result');
        expect(['completed', 'error']).toContain(result.stopReason);
        await withTimeout(run.dispose(), 10_000, 'dispose');
        outcomes.set('ok', (outcomes.get('ok') ?? 0) + 1);
      } catch (error) {
        expect(error, `not a BroodError: ${String(error)}`).toBeInstanceOf(BroodError);
        const { code } = error as BroodError;
        expect(START_CODES, `unexpected code ${code}`).toContain(code);
        outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
        expect((await brood.sessions.list()).length, 'a rejected start left a session').toBe(sessionsBefore);
      }
    }),
    { numRuns: 60, seed: 0xbad },
  );
  console.log('start outcomes', Object.fromEntries(outcomes));
  expect(outcomes.get('ok') ?? 0).toBeGreaterThan(0);
  expect(outcomes.size).toBeGreaterThan(3);
});

it('ToolFilter and persona templates through createAgent: an agent, or INVALID_TOOL_FILTER / INVALID_CONFIG / TEMPLATE_ERROR, nothing created on failure', async () => {
  const outcomes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(
      fc.option(filter, { nil: undefined }),
      fc.option(templateText, { nil: undefined }),
      async (toolFilter, persona) => {
        const before = (await brood.sessions.list()).length;
        const options = {
          model: route,
          ...(toolFilter === undefined ? {} : { toolFilter }),
          ...(persona === undefined ? {} : { persona }),
        };
        let pending: Promise<Agent>;
        try {
          pending = brood.createAgent(options as never);
        } catch (error) {
          throw new Error(`createAgent() threw synchronously: ${String(error)}`);
        }
        try {
          const agent = await withTimeout(pending, 5_000, 'createAgent');
          outcomes.set('ok', (outcomes.get('ok') ?? 0) + 1);
          expect(agent.tools.view().names.every((n) => ['alpha', 'beta', 'gamma'].includes(n))).toBe(true);
          await agent.dispose();
        } catch (error) {
          expect(error, `not a BroodError: ${String(error)}`).toBeInstanceOf(BroodError);
          const { code } = error as BroodError;
          expect(['INVALID_TOOL_FILTER', 'INVALID_CONFIG', 'TEMPLATE_ERROR']).toContain(code);
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
          expect((await brood.sessions.list()).length).toBe(before);
        }
      },
    ),
    { numRuns: 150, seed: 0xf117 },
  );
  console.log('createAgent outcomes', Object.fromEntries(outcomes));
  expect(outcomes.get('ok') ?? 0).toBeGreaterThan(0);
  expect(outcomes.get('INVALID_TOOL_FILTER') ?? 0).toBeGreaterThan(0);
  expect(outcomes.get('TEMPLATE_ERROR') ?? 0).toBeGreaterThan(0);
});
