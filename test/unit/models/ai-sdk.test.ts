/**
 * aiSdkModels on the inline runner: what is refused and when (a proxied model at aiSdkModels, a module's
 * at the first createAgent that routes to it), what an AI SDK call is asked (prompt, tools, output
 * cap, reasoning where the specification has it), and how its answer reads (finish reasons, v2 flat
 * and v3/v4 nested usage, failures and brood's own retries).
 */
import { APICallError } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions, ModelProviderConfig } from '../../../src/index.js';
import { aiSdkModels, createBrood, defineTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { collectDiagnostics } from '../../support/diagnostics.js';

const FIXTURE = new URL('../../support/fixtures/ai-sdk-models.mjs', import.meta.url);

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

type Usage = Record<string, unknown>;
const nested = (
  input: number,
  output: number,
  more: { cacheRead?: number; cacheWrite?: number; reasoning?: number } = {},
) => ({
  inputTokens: { total: input, noCache: undefined, cacheRead: more.cacheRead, cacheWrite: more.cacheWrite },
  outputTokens: { total: output, text: undefined, reasoning: more.reasoning },
});
const answer = (text: string, finishReason: unknown, usage: Usage = nested(1, 1)) => [
  { type: 'text-delta', id: 't', delta: text },
  { type: 'finish', finishReason, usage },
];
const streaming = (parts: unknown[]) => async () => ({ stream: convertArrayToReadableStream(parts as never[]) });

/** A specification v2 model, by hand: `ai/test` ships only v3 and v4 mocks. */
function v2Model(parts: unknown[]) {
  return {
    specificationVersion: 'v2',
    provider: 'hand',
    modelId: 'm1',
    supportedUrls: {},
    doGenerate: async () => ({}),
    doStream: streaming(parts),
  };
}

async function runOn(
  config: ModelProviderConfig,
  model = 'm1',
  extra: Record<string, unknown> = {},
  options: BroodOptions = {},
) {
  brood = createBrood({ runner: 'inline', models: [config], ...options });
  const agent = await brood.createAgent({ model: { provider: config.id, model, ...extra } });
  return agent.run('hello');
}

describe('what is refused, and when', () => {
  it('aiSdkModels refuses a proxied value that is no supported LanguageModel, naming the version', () => {
    const old = { ...v2Model([]), specificationVersion: 'v1' };
    expect(expectCode(() => aiSdkModels({ id: 'p', models: { m1: old } }), 'INVALID_CONFIG').message).toMatch(
      /'v1'.*v2, v3, v4/,
    );
    expectCode(() => aiSdkModels({ id: 'p', models: { m1: 'gpt-5' } }), 'INVALID_CONFIG');
    expectCode(() => aiSdkModels({ id: 'p', models: { m1: { doStream: () => undefined } } }), 'INVALID_CONFIG');
  });

  it('aiSdkModels refuses a relative module path, options that cannot cross to a thread, and mixed shapes', () => {
    expect(
      expectCode(() => aiSdkModels({ id: 'm', module: './models.js', models: ['x'] }), 'INVALID_CONFIG').details,
    ).toMatchObject({ key: 'module' });
    expectCode(
      () => aiSdkModels({ id: 'm', module: FIXTURE, options: { fetch: () => 1 }, models: ['x'] }),
      'INVALID_CONFIG',
    );
    expectCode(
      () => aiSdkModels({ id: 'm', module: FIXTURE, models: { x: new MockLanguageModelV4() } }),
      'INVALID_CONFIG',
    );
    expectCode(
      () => aiSdkModels({ id: 'm', export: 'chatModel', models: { x: new MockLanguageModelV4() } }),
      'INVALID_CONFIG',
    );
  });

  it.each([
    ['a module that cannot be imported', new URL('./no-such-module.mjs', FIXTURE), 'chatModel', /cannot load/],
    ['an export that is not a function', FIXTURE, 'notAFunction', /not a function/],
    ['an export returning a v1 model', FIXTURE, 'v1Model', /'v1'/],
    ['an export returning a model id', FIXTURE, 'idOnly', /not a LanguageModel/],
  ])(
    'a module shape with %s fails createAgent with INVALID_CONFIG naming module and export',
    async (_, module, name, reason) => {
      brood = createBrood({
        runner: 'inline',
        models: [aiSdkModels({ id: 'm', module, export: name, models: ['x'] })],
      });
      const error = await expectCode(brood.createAgent({ model: { provider: 'm', model: 'x' } }), 'INVALID_CONFIG');
      expect(error.message).toContain(module.href);
      expect(error.message).toContain(`'${name}'`);
      expect(error.message).toMatch(reason);
      expect(await brood.sessions.list()).toEqual([]);
    },
  );
});

describe('the call', () => {
  it('carries the system prompt, history, tools as JSON Schema function tools, and maxTokens as maxOutputTokens', async () => {
    const model = new MockLanguageModelV4({ doStream: streaming(answer('hi', { unified: 'stop', raw: 'stop' })) });
    brood = createBrood({
      runner: 'inline',
      persona: 'You are terse.',
      models: [aiSdkModels({ id: 'p', models: { m1: model } })],
    });
    brood.tools.register(
      defineTool({
        name: 'lookup',
        description: 'Looks up.',
        parameters: { type: 'object', properties: { q: { type: 'string' } } },
        execute: () => 'x',
      }),
    );
    const agent = await brood.createAgent({ model: { provider: 'p', model: 'm1', maxTokens: 77 } });
    await agent.run('hello');
    const [call] = model.doStreamCalls;
    expect(call?.maxOutputTokens).toBe(77);
    expect(call?.prompt[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You are terse.') });
    expect(call?.prompt.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'hello' }] });
    expect(call?.tools).toContainEqual(
      expect.objectContaining({
        type: 'function',
        name: 'lookup',
        inputSchema: expect.objectContaining({ type: 'object' }),
      }),
    );
    expect(call?.abortSignal).toBeInstanceOf(AbortSignal);
  });

  it("sends a reasoning effort as v4's reasoning option, and leaves it out before v4", async () => {
    const v4 = new MockLanguageModelV4({ doStream: streaming(answer('a', { unified: 'stop', raw: 'stop' })) });
    const v3 = new MockLanguageModelV3({ doStream: streaming(answer('b', { unified: 'stop', raw: 'stop' })) });
    const config = aiSdkModels({
      id: 'p',
      models: { v4: { model: v4, efforts: ['low', 'high'] }, v3: { model: v3, efforts: ['high'] } },
    });
    expect(await runOn(config, 'v4', { reasoningEffort: 'high' })).toMatchObject({ stopReason: 'completed' });
    await brood?.close();
    const reported = collectDiagnostics();
    expect(
      await runOn(config, 'v3', { reasoningEffort: 'high' }, { onDiagnostic: reported.onDiagnostic }),
    ).toMatchObject({ stopReason: 'completed' });
    expect(v4.doStreamCalls[0]?.reasoning).toBe('high');
    expect(v3.doStreamCalls[0]).not.toHaveProperty('reasoning');
    // The effort left out is told to the host (its wording: ai-sdk-proxy.e2e.test.ts).
    expect(reported.messages.length).toBeGreaterThanOrEqual(1);
  });
});

describe('the answer', () => {
  it.each([
    [{ unified: 'content-filter', raw: 'content_filter' }, 'refusal'],
    [{ unified: 'length', raw: 'length' }, 'max-tokens'],
  ])('finish reason %o ends the turn %s', async (finishReason, stopReason) => {
    const model = new MockLanguageModelV4({ doStream: streaming(answer('x', finishReason)) });
    expect(await runOn(aiSdkModels({ id: 'p', models: { m1: model } }))).toMatchObject({ stopReason });
  });

  it.each([
    [
      'v4 other',
      new MockLanguageModelV4({ doStream: streaming(answer('x', { unified: 'other', raw: 'weird_reason' })) }),
      'weird_reason',
    ],
    [
      'v4 interrupted',
      new MockLanguageModelV4({ doStream: streaming(answer('x', { unified: 'interrupted', raw: undefined })) }),
      'interrupted',
    ],
    ['v2 unknown', v2Model(answer('x', 'unknown', { inputTokens: 1, outputTokens: 1 })), 'unknown'],
  ])("%s ends the turn 'error', its diagnostic naming the raw reason", async (_, model, raw) => {
    const result = await runOn(aiSdkModels({ id: 'p', models: { m1: model } }));
    expect(result.stopReason).toBe('error');
    expect(result.diagnostic).toContain(`'${raw}'`);
  });

  it('maps v3/v4 nested usage and v2 flat usage, reasoning tokens included', async () => {
    const v4 = new MockLanguageModelV4({
      doStream: streaming(
        answer(
          'x',
          { unified: 'stop', raw: 'stop' },
          nested(100, 30, { cacheRead: 60, cacheWrite: 10, reasoning: 20 }),
        ),
      ),
    });
    expect((await runOn(aiSdkModels({ id: 'p', models: { m1: v4 } }))).usage).toEqual({
      inputTokens: 100,
      outputTokens: 30,
      cacheReadTokens: 60,
      cacheWriteTokens: 10,
      reasoningTokens: 20,
    });
    await brood?.close();
    const v2 = v2Model(
      answer('x', 'stop', {
        inputTokens: 50,
        outputTokens: 9,
        totalTokens: 59,
        cachedInputTokens: 40,
        reasoningTokens: 4,
      }),
    );
    expect((await runOn(aiSdkModels({ id: 'p', models: { m1: v2 } }))).usage).toEqual({
      inputTokens: 50,
      outputTokens: 9,
      cacheReadTokens: 40,
      reasoningTokens: 4,
    });
  });

  it('keeps reasoning text with the assistant message and sends it back on the next request', async () => {
    const model = new MockLanguageModelV4({
      doStream: async ({ prompt }) => {
        const second = prompt.some((message) => message.role === 'tool');
        const parts = second
          ? answer('done', { unified: 'stop', raw: 'stop' })
          : [
              { type: 'reasoning-delta', id: 'r', delta: 'I should look.' },
              { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{}' },
              { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: nested(1, 1) },
            ];
        return { stream: convertArrayToReadableStream(parts as never[]) };
      },
    });
    brood = createBrood({ runner: 'inline', models: [aiSdkModels({ id: 'p', models: { m1: model } })] });
    brood.tools.register(
      defineTool({ name: 'lookup', description: 'Looks up.', parameters: { type: 'object' }, execute: () => 'found' }),
    );
    const agent = await brood.createAgent({ model: { provider: 'p', model: 'm1' } });
    expect(await agent.run('look')).toMatchObject({ stopReason: 'completed', output: 'done' });
    const assistant = model.doStreamCalls[1]?.prompt.find((message) => message.role === 'assistant');
    expect(assistant?.content).toEqual([
      { type: 'reasoning', text: 'I should look.' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: {} },
    ]);
  });
});

describe('failures: the model never retries, brood does', () => {
  const unavailable = () =>
    new APICallError({
      message: 'overloaded',
      url: 'u',
      requestBodyValues: {},
      statusCode: 503,
      responseHeaders: { 'retry-after': '0' },
      isRetryable: true,
    });

  it('a retryable APICallError is asked again under the retry options', async () => {
    let calls = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => {
        calls += 1;
        if (calls === 1) throw unavailable();
        return { stream: convertArrayToReadableStream(answer('ok', { unified: 'stop', raw: 'stop' }) as never[]) };
      },
    });
    expect(await runOn(aiSdkModels({ id: 'p', models: { m1: model }, retry: { retries: 1 } }))).toMatchObject({
      stopReason: 'completed',
      output: 'ok',
    });
    expect(calls).toBe(2);
  });

  it("out of retries, or not retryable, the turn ends 'error' with the status and the provider's message", async () => {
    const refused = new MockLanguageModelV4({
      doStream: async () => {
        throw new APICallError({
          message: 'bad key',
          url: 'u',
          requestBodyValues: {},
          statusCode: 401,
          isRetryable: false,
        });
      },
    });
    const result = await runOn(aiSdkModels({ id: 'p', models: { m1: refused }, retry: { retries: 3 } }));
    expect(result.stopReason).toBe('error');
    expect(result.diagnostic).toContain('HTTP 401');
    expect(result.diagnostic).toContain('bad key');
    expect(refused.doStreamCalls).toHaveLength(1);
  });
});
