/**
 * One delegation tree, three adapters, real worker threads: the lead runs on openAICompatible, its
 * child on anthropicCompatible, the grandchild on the official-SDK `module` adapter from examples/.
 * The adapters run inside the workers, so the servers are real loopback sockets (an in-process HTTP
 * mock would never see these requests).
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import type { Brood } from '../../../src/brood.js';
import { subagentTool } from '../../../src/delegation/index.js';
import { anthropicCompatible, moduleAdapter, openAICompatible } from '../../../src/models/index.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import type { BroodEvent } from '../../../src/types.js';
import { eventsOf, ofType } from '../../support/events.js';
import { assertBuilt } from '../../support/run-cli.js';
import { behaviourBrood } from '../../support/runtime.js';
import {
  blockStop,
  jsonDelta,
  messageDelta,
  messageStart,
  messageStop,
  signatureDelta,
  textStream,
  thinkingDelta,
  thinkingStart,
  toolStart,
} from '../../unit/models/anthropic-wire.js';
import { type Handler, type Loopback, sseFrames, startLoopback } from '../../unit/models/loopback.js';

let openai: Loopback;
let anthropic: Loopback;
let brood: Brood | undefined;
beforeAll(async () => {
  assertBuilt(); // workers load the built driver (and the example imports the built package)
  [openai, anthropic] = await Promise.all([startLoopback(), startLoopback()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close()]);
});
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  openai.reset();
  anthropic.reset();
});

const chatText = (text: string, usage: [number, number]) =>
  sseFrames([
    { data: { choices: [{ index: 0, delta: { content: text }, finish_reason: 'stop' }] } },
    {
      data: {
        choices: [],
        usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] },
      },
    },
    '[DONE]',
  ]);
const chatToolCall = (name: string, args: unknown) =>
  sseFrames([
    {
      data: {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: 'call_lead', type: 'function', function: { name, arguments: JSON.stringify(args) } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
    },
    '[DONE]',
  ]);

/** The lead (model gpt-lead) delegates once, then reports; the grandchild (gpt-sdk, via the SDK) just answers. */
const openaiServer: Handler = (req, res, seen) => {
  const messages = seen.body.messages as { role: string; content: string }[];
  const last = messages[messages.length - 1]!;
  if (seen.body.model === 'gpt-sdk') return chatText('the SDK grandchild says hi', [3, 4])(req, res, seen);
  if (last.role === 'tool') return chatText(`lead got: ${last.content}`, [10, 5])(req, res, seen);
  return chatToolCall('subagent', {
    description: 'ask claude',
    prompt: 'relay the grandchild',
    provider: 'an',
    model: 'claude-x',
  })(req, res, seen);
};

/** The child delegates to the SDK provider, then relays the result. */
const anthropicServer: Handler = (req, res, seen) => {
  const messages = seen.body.messages as { role: string; content: { type: string; content?: string }[] }[];
  const result = messages[messages.length - 1]!.content.find((block) => block.type === 'tool_result');
  if (result !== undefined) return sseFrames(textStream(`claude relayed: ${result.content}`))(req, res, seen);
  const args = JSON.stringify({ description: 'ask the sdk', prompt: 'say hi', provider: 'sdk', model: 'gpt-sdk' });
  return sseFrames([
    messageStart({ input_tokens: 7, output_tokens: 1, cache_read_input_tokens: 40, cache_creation_input_tokens: 2 }),
    toolStart(0, 'toolu_child', 'subagent'),
    jsonDelta(0, args.slice(0, 10)),
    jsonDelta(0, args.slice(10)),
    blockStop(0),
    messageDelta('tool_use', { output_tokens: 6 }),
    messageStop(),
  ])(req, res, seen);
};

it('a lead on openAICompatible, a child on anthropicCompatible and a grandchild on the SDK module adapter, in workers', async () => {
  openai.fallback(openaiServer);
  anthropic.fallback(anthropicServer);
  brood = behaviourBrood({
    models: [
      openAICompatible({ id: 'oa', baseURL: `${openai.base}/v1`, models: ['gpt-lead'], retry: { retries: 0 } }),
      anthropicCompatible({
        id: 'an',
        baseURL: anthropic.base,
        apiKey: 'sk-ant-test',
        models: ['claude-x'],
        retry: { retries: 0 },
      }),
      moduleAdapter({
        id: 'sdk',
        models: ['gpt-sdk'],
        options: { baseURL: `${openai.base}/v1`, maxRetries: 0 },
        moduleUrl: new URL('../../../examples/openai-sdk-adapter.mjs', import.meta.url),
      }),
    ],
  });
  brood.use(subagentTool({ provider: 'spawn', enableModelSelection: true, maxDepth: 2 }));
  const stream = brood.events();
  const lead = await brood.createAgent({ model: { provider: 'oa', model: 'gpt-lead' } });
  const result = await lead.run('start');
  const events: BroodEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    if (event.type === 'turn-end' && event.agentId === lead.id) break;
  }

  expect(result.stopReason).toBe('completed');
  expect(result.output).toContain('lead got: ');
  expect(result.output).toContain('claude relayed: ');
  expect(result.output).toContain('the SDK grandchild says hi');
  // Usage rolls up the whole tree, including the Anthropic child's prompt-cache counters.
  expect(result.usage.cacheReadTokens).toBe(40);
  expect(result.usage.cacheWriteTokens).toBe(2);
  expect(result.usage.inputTokens).toBeGreaterThanOrEqual(10 + 49 + 3);
  const childEnd = events.find(
    (e): e is Extract<BroodEvent, { type: 'subagent-end' }> => e.type === 'subagent-end' && e.agentId === lead.id,
  );
  expect(childEnd?.usage).toMatchObject({ cacheReadTokens: 40, cacheWriteTokens: 2 });

  const sessions = await brood.sessions.list();
  const child = sessions.find((h) => h.parentSession === lead.id)!;
  const grandchild = sessions.find((h) => h.parentSession === child.id)!;
  expect(child.model).toMatchObject({ provider: 'an', model: 'claude-x' });
  expect(grandchild.model).toMatchObject({ provider: 'sdk', model: 'gpt-sdk' });
  const [childRequest] = ofType(await eventsOf(brood, child.id), 'model/request');
  expect(childRequest?.data).toMatchObject({ provider: 'an', model: 'claude-x' });

  const claude = anthropic.seen[0]!;
  expect(claude.url).toBe('/v1/messages');
  expect(claude.headers['x-api-key']).toBe('sk-ant-test');
  expect(claude.body).toMatchObject({
    model: 'claude-x',
    max_tokens: 4096,
    stream: true,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'relay the grandchild' }] }],
  });
  expect((claude.body.tools as { input_schema?: unknown }[]).every((t) => typeof t.input_schema === 'object')).toBe(
    true,
  );
  const sdkRequest = openai.seen.find((s) => s.body.model === 'gpt-sdk')!;
  expect(sdkRequest.headers['user-agent']).toMatch(/^OpenAI\/JS /);
  expect(
    openai.seen
      .filter((s) => s.body.model === 'gpt-lead')
      .every((s) => String(s.headers['user-agent']).startsWith('brood/')),
  ).toBe(true);
}, 60_000);

it('extended thinking inside a tool loop: the thinking block is kept by the driver and sent back (workers)', async () => {
  anthropic.fallback((req, res, seen) => {
    const messages = seen.body.messages as { role: string; content: { type: string }[] }[];
    if (messages.length > 1) return sseFrames(textStream('72 degrees'))(req, res, seen);
    return sseFrames([
      messageStart({ input_tokens: 5, output_tokens: 1 }),
      thinkingStart(0),
      thinkingDelta(0, 'I should check the weather.'),
      signatureDelta(0, 'EqQBCgIYAhIM'),
      blockStop(0),
      toolStart(1, 'toolu_w', 'weather'),
      jsonDelta(1, '{"city":"Graz"}'),
      blockStop(1),
      messageDelta('tool_use', { output_tokens: 20 }),
      messageStop(),
    ])(req, res, seen);
  });
  brood = behaviourBrood({
    models: [
      anthropicCompatible({
        id: 'an',
        baseURL: anthropic.base,
        models: [{ id: 'claude-t', efforts: ['low', 'high'], maxTokens: 8000 }],
      }),
    ],
  });
  brood.tools.register(
    defineTool({
      name: 'weather',
      description: 'weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => `sunny in ${city}`,
    }),
  );
  const agent = await brood.createAgent({ model: { provider: 'an', model: 'claude-t', reasoningEffort: 'low' } });
  const result = await agent.run('weather in Graz?');
  expect(result).toMatchObject({ stopReason: 'completed', output: '72 degrees' });
  const [first, second] = anthropic.seen.map(
    (s) => s.body as { thinking?: unknown; messages: { role: string; content: Record<string, unknown>[] }[] },
  );
  expect(first!.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  expect(second!.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  expect(second!.messages[1]).toEqual({
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'I should check the weather.', signature: 'EqQBCgIYAhIM' },
      { type: 'tool_use', id: 'toolu_w', name: 'weather', input: { city: 'Graz' } },
    ],
  });
  expect(second!.messages[2]).toEqual({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_w', content: expect.stringContaining('sunny in Graz') }],
  });
  // The block is logged with the assistant message, so a resumed session can send it back too.
  const [logged] = ofType(await eventsOf(brood, agent.id), 'assistant/message');
  expect(logged?.data.reasoning).toEqual([
    { type: 'thinking', thinking: 'I should check the weather.', signature: 'EqQBCgIYAhIM' },
  ]);
}, 60_000);
