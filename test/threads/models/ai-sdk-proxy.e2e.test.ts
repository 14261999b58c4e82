/**
 * aiSdkModels, proxied shape: model objects kept in the parent (the `ai/test` mocks), drivers' requests
 * crossing to them. The same conversation gives the same transcript and usage as the module shape
 * with `@ai-sdk/openai-compatible`; a 429's status and retry-after cross the thread boundary and pause
 * the provider; an error part mid-answer and an abort behave as with brood's own adapters.
 */
import { APICallError } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Brood, BroodEvent, ModelProviderConfig } from '../../../src/index.js';
import { aiSdkModels, createBrood, scriptedModels, subagentTool } from '../../../src/index.js';
import { chatScenario, echoTool, scenarioParts, transcriptOf } from '../../support/ai-sdk-scenario.js';
import { subagentCall } from '../../support/fan-out.js';
import { route } from '../../support/route.js';
import { assertBuilt } from '../../support/run-cli.js';
import { type Loopback, startLoopback } from '../../unit/models/loopback.js';

type Runner = 'worker' | 'inline';
const PROMPT_MS = 1000;

let server: Loopback;
let brood: Brood | undefined;
beforeAll(async () => {
  assertBuilt();
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  server.reset();
});

type Prompt = { role: string }[];
const scenarioStream = (version: 'v3' | 'v4') => async (options: { prompt: unknown }) => ({
  stream: convertArrayToReadableStream(scenarioParts(options.prompt as Prompt, version) as never[]),
});

/** Runs the scenario on `models` and returns what the user sees: transcript, streamed text, result. */
async function runScenario(runner: Runner, models: ModelProviderConfig) {
  brood = createBrood({ runner, pool: { threads: 2 }, models: [models] });
  brood.tools.register(echoTool);
  const events = brood.events();
  const agent = await brood.createAgent({ model: { provider: models.id, model: 'm1' } });
  const result = await agent.run('echo alpha and beta');
  const deltas: string[] = [];
  for await (const event of events) {
    if (event.type === 'text-delta') deltas.push(event.delta);
    if (event.type === 'turn-end') break;
  }
  const transcript = await transcriptOf(brood, agent.id);
  await brood.close();
  brood = undefined;
  return { transcript, deltas: deltas.join(''), usage: result.usage, output: result.output };
}

describe.each(['worker', 'inline'] as const)("runner '%s'", (runner) => {
  it('gives the same transcript, streamed text and usage as the module shape, with MockLanguageModelV3 and V4', async () => {
    server.fallback(chatScenario);
    const module = await runScenario(
      runner,
      aiSdkModels({
        id: 'p',
        module: new URL('../../support/fixtures/ai-sdk-models.mjs', import.meta.url),
        export: 'chatModel',
        options: { baseURL: `${server.base}/v1` },
        models: ['m1'],
      }),
    );
    expect(module.output).toBe('the echoes: alpha and beta');
    for (const model of [
      new MockLanguageModelV3({ doStream: scenarioStream('v3') }),
      new MockLanguageModelV4({ doStream: scenarioStream('v4') }),
    ]) {
      const proxied = await runScenario(runner, aiSdkModels({ id: 'p', models: { m1: model } }));
      expect(proxied).toEqual(module);
    }
  });

  it('a reasoning effort a v3 model cannot take is ignored, and onDiagnostic says so; a v4 model gets it', async () => {
    const calls: unknown[] = [];
    const stream = (version: 'v3' | 'v4') => async (options: { prompt: unknown; reasoning?: unknown }) => {
      calls.push(options.reasoning);
      return { stream: convertArrayToReadableStream(scenarioParts(options.prompt as Prompt, version) as never[]) };
    };
    for (const [version, model] of [
      ['v3', new MockLanguageModelV3({ doStream: stream('v3') })],
      ['v4', new MockLanguageModelV4({ doStream: stream('v4') })],
    ] as const) {
      const diagnostics: string[] = [];
      brood = createBrood({
        runner,
        pool: { threads: 2 },
        onDiagnostic: (message) => diagnostics.push(message),
        models: [aiSdkModels({ id: 'p', models: { m1: { model, efforts: ['low', 'high'] } } })],
      });
      brood.tools.register(echoTool);
      const agent = await brood.createAgent({ model: { provider: 'p', model: 'm1', reasoningEffort: 'high' } });
      expect((await agent.run('echo alpha and beta')).stopReason).toBe('completed');
      const ignored = diagnostics.filter((message) => message.includes("reasoning effort 'high' ignored"));
      if (version === 'v3') expect(ignored.length).toBeGreaterThan(0);
      else expect(ignored).toEqual([]);
      await brood.close();
      brood = undefined;
    }
    expect(calls.at(-1)).toBeDefined();
  });

  it("ends the turn 'error' with the provider's message when an error part arrives mid-answer", async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: 'text-delta', id: 't', delta: 'partial ' },
          {
            type: 'error',
            error: new APICallError({ message: 'upstream overloaded', url: 'x', requestBodyValues: {} }),
          },
        ] as never[]),
      }),
    });
    brood = createBrood({ runner, pool: { threads: 1 }, models: [aiSdkModels({ id: 'p', models: { m1: model } })] });
    const agent = await brood.createAgent({ model: { provider: 'p', model: 'm1' } });
    const result = await agent.run('hello');
    expect(result.stopReason).toBe('error');
    expect(result.diagnostic).toContain('upstream overloaded');
  });

  it('cancels the call in the parent when the turn is aborted, while the stream is still open', async () => {
    let callAborted!: () => void;
    const aborted = new Promise<void>((resolve) => (callAborted = resolve));
    let streaming!: () => void;
    const started = new Promise<void>((resolve) => (streaming = resolve));
    const model = new MockLanguageModelV4({
      doStream: async ({ abortSignal }) => {
        abortSignal?.addEventListener('abort', () => callAborted());
        return {
          stream: new ReadableStream({
            start(controller) {
              controller.enqueue({ type: 'text-delta', id: 't', delta: 'thinking…' });
              streaming();
            },
          }),
        };
      },
    });
    brood = createBrood({ runner, pool: { threads: 1 }, models: [aiSdkModels({ id: 'p', models: { m1: model } })] });
    const agent = await brood.createAgent({ model: { provider: 'p', model: 'm1' } });
    const controller = new AbortController();
    const turn = agent.run('never ends', { signal: controller.signal });
    await started;
    const at = performance.now();
    controller.abort();
    const result = await turn;
    expect(result.stopReason).toBe('aborted');
    expect(result.diagnostic).toBeUndefined();
    expect(performance.now() - at).toBeLessThan(PROMPT_MS);
    await aborted; // the parent's call saw the abort (the test times out otherwise)
  });
});

it("a proxied 429's status and retry-after cross to the thread: the provider pauses for every agent (workers)", async () => {
  let calls = 0;
  const model = new MockLanguageModelV4({
    doStream: async () => {
      calls += 1;
      if (calls === 1) {
        throw new APICallError({
          message: 'rate limited',
          url: 'https://provider.test/v1/chat/completions',
          requestBodyValues: {},
          statusCode: 429,
          responseHeaders: { 'retry-after': '0.3' },
          isRetryable: true,
        });
      }
      return {
        stream: convertArrayToReadableStream([
          { type: 'text-delta', id: 't', delta: 'ok' },
          {
            type: 'finish',
            finishReason: { unified: 'stop', raw: 'stop' },
            usage: {
              inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: 1, text: 1, reasoning: undefined },
            },
          },
        ] as never[]),
      };
    },
  });
  const prompts = Array.from({ length: 6 }, (_, i) => `child ${i}`);
  brood = createBrood({
    runner: 'worker',
    pool: { threads: 2 },
    maxParallelToolCalls: 6,
    limits: { providers: { p: { concurrent: 2 } } },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [{ match: 'fan out', turns: [{ toolCalls: prompts.map((p) => subagentCall(p)) }, { text: 'done' }] }],
      }),
      aiSdkModels({ id: 'p', models: { m1: model } }),
    ],
  });
  brood.use(subagentTool({ provider: 'spawn', agentOptions: { provider: 'p', model: 'm1' } }));
  const events: BroodEvent[] = [];
  const collecting = (async () => {
    for await (const event of (brood as Brood).events()) events.push(event);
  })();
  const result = await (await brood.createAgent({ model: route })).run('fan out');
  await brood.close();
  await collecting;
  expect(result.stopReason).toBe('completed');
  expect(events.filter((event) => event.type === 'throttled')).toEqual([
    expect.objectContaining({ provider: 'p', retryAfterMs: 300 }),
  ]);
  expect(calls).toBe(7); // the refused request was asked again once, not retried by the model
  const ends = events.filter((event) => event.type === 'subagent-end');
  expect(ends.map((end) => (end as { usage?: unknown }).usage)).toEqual(
    prompts.map(() => expect.objectContaining({ inputTokens: 3, outputTokens: 1 })),
  );
}, 60_000);
