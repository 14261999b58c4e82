/**
 * aiSdkModels, module shape: `@ai-sdk/openai-compatible` built from a module in the driver's thread,
 * against a real loopback Chat Completions server — streamed text, parallel tool calls, usage,
 * delegation to children on the same provider, a prompt abort, and a 429 with retry-after that the
 * tree-wide scheduler applies to every agent. Worker and inline runners.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Brood, BroodEvent, BroodOptions } from '../../../src/index.js';
import { aiSdkModels, createBrood, scriptedModels, subagentTool } from '../../../src/index.js';
import { ANSWER, chatScenario, ECHO_CALLS, echoTool, transcriptOf, USAGE } from '../../support/ai-sdk-scenario.js';
import { subagentCall } from '../../support/fan-out.js';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { route } from '../../support/route.js';
import { assertBuilt } from '../../support/run-cli.js';
import { frameText, type Loopback, sseFrames, startLoopback } from '../../unit/models/loopback.js';

const MODELS_MODULE = new URL('../../support/fixtures/ai-sdk-models.mjs', import.meta.url);
/** Abort → turn end, generously above the 100 ms target on shared CI cores (as abort-prompt.test.ts). */
const PROMPT_MS = 1000;

let server: Loopback;
let brood: Brood | undefined;
beforeAll(async () => {
  assertBuilt(); // pool threads load the built driver
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(async () => {
  await brood?.close();
  brood = undefined;
  server.reset();
});

function chatModels(baseURL: string, models: string[] = ['m1']) {
  return aiSdkModels({ id: 'loop', module: MODELS_MODULE, export: 'chatModel', options: { baseURL }, models });
}

function start(runner: 'worker' | 'inline', options: BroodOptions = {}): Brood {
  brood = createBrood({ runner, pool: { threads: 2 }, models: [chatModels(`${server.base}/v1`)], ...options });
  return brood;
}

describe.each(['worker', 'inline'] as const)("runner '%s'", (runner) => {
  it('streams the answer, runs both parallel tool calls and reports usage', async () => {
    server.fallback(chatScenario);
    const runtime = start(runner);
    runtime.tools.register(echoTool);
    const deltas: string[] = [];
    const events = runtime.events();
    const agent = await runtime.createAgent({ model: { provider: 'loop', model: 'm1' } });
    const result = await agent.run('echo alpha and beta');
    for await (const event of events) {
      if (event.type === 'text-delta') deltas.push(event.delta);
      if (event.type === 'turn-end') break;
    }

    expect(result).toMatchObject({ stopReason: 'completed', output: ANSWER.join('') });
    expect(deltas.join('')).toBe(ANSWER.join(''));
    expect(result.usage).toMatchObject({ inputTokens: 2 * USAGE.input, outputTokens: 2 * USAGE.output });
    const transcript = await transcriptOf(runtime, agent.id);
    expect(transcript.filter((e) => (e as { type: string }).type === 'tool/result')).toEqual(
      ECHO_CALLS.map((call) => ({ type: 'tool/result', callId: call.id, content: `echo:${call.input.text}` })),
    );
    // The second request carried both calls and both results back to the model.
    const second = server.seen[1]?.body.messages as { role: string; tool_call_id?: string }[];
    expect(second.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b']);
    expect(server.seen[0]?.body.tools).toEqual([
      expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'echo' }) }),
    ]);
  });

  it('ends the turn aborted at once while the stream is still open', async () => {
    let seenRequest = false;
    server.fallback((_req, res) => {
      seenRequest = true;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frameText({ data: { id: 'c', choices: [{ index: 0, delta: { content: 'thinking…' } }] } }));
    });
    const agent = await start(runner).createAgent({ model: { provider: 'loop', model: 'm1' } });
    const controller = new AbortController();
    const turn = agent.run('never ends', { signal: controller.signal });
    while (!seenRequest) await new Promise((resolve) => setTimeout(resolve, 2));
    await new Promise((resolve) => setTimeout(resolve, 20)); // the first delta is read
    const at = performance.now();
    controller.abort();
    const result = await turn;
    expect(result.stopReason).toBe('aborted');
    expect(result.diagnostic).toBeUndefined(); // the driver ended it, not a force stop
    expect(performance.now() - at).toBeLessThan(PROMPT_MS);
  });
});

it('delegates to children on the same AI SDK provider (workers)', async () => {
  server.fallback((req, res, seen) => {
    const messages = seen.body.messages as { role: string; content: string }[];
    const first = messages.find((m) => m.role === 'user')?.content ?? '';
    const text = (content: string) =>
      sseFrames([
        { data: { id: 'c', choices: [{ index: 0, delta: { content }, finish_reason: 'stop' }] } },
        { data: { id: 'c', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } } },
        '[DONE]',
      ])(req, res, seen);
    if (first.startsWith('child')) return text(`${first} reporting`);
    const result = messages.find((m) => m.role === 'tool');
    if (result !== undefined) return text(`lead heard: ${result.content}`);
    const args = JSON.stringify({ description: 'ask a child', prompt: 'child one' });
    return sseFrames([
      {
        data: {
          id: 'c',
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  { index: 0, id: 'call_s', type: 'function', function: { name: 'subagent', arguments: args } },
                ],
              },
              finish_reason: 'tool_calls',
            },
          ],
        },
      },
      '[DONE]',
    ])(req, res, seen);
  });
  const runtime = start('worker');
  runtime.use(subagentTool({ provider: 'spawn' }));
  const lead = await runtime.createAgent({ model: { provider: 'loop', model: 'm1' } });
  const result = await lead.run('delegate');
  expect(result.stopReason).toBe('completed');
  expect(result.output).toContain('child one reporting');
  const child = (await runtime.sessions.list()).find((header) => header.parentSession === lead.id);
  expect(child?.model).toMatchObject({ provider: 'loop', model: 'm1' });
  // The tree's usage: the lead's answer and the child's (the delegating request reported none).
  expect(result.usage).toMatchObject({ inputTokens: 10, outputTokens: 4 });
});

describe('a 429 with retry-after (limits, workers)', () => {
  let model: LoopbackModel | undefined;
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });

  it("pauses every agent's requests to the provider, and emits throttled", async () => {
    model = await startLoopbackModel({ answer: () => 'ok', limit: { throttleFirst: 1, retryAfterMs: 300 } });
    const prompts = Array.from({ length: 12 }, (_, i) => `child ${i}`);
    brood = createBrood({
      runner: 'worker',
      pool: { threads: 2 },
      maxParallelToolCalls: 12,
      limits: { providers: { loop: { concurrent: 4 } } },
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            { match: 'fan out', turns: [{ toolCalls: prompts.map((p) => subagentCall(p)) }, { text: 'done' }] },
          ],
        }),
        chatModels(model.baseURL, ['m']),
      ],
    });
    brood.use(subagentTool({ provider: 'spawn', agentOptions: { provider: 'loop', model: 'm' } }));
    const events: BroodEvent[] = [];
    const collecting = (async () => {
      for await (const event of (brood as Brood).events()) events.push(event);
    })();
    const root = await brood.createAgent({ model: route });
    const result = await root.run('fan out');
    await brood.close();
    await collecting;

    expect(result.stopReason).toBe('completed');
    expect(model.counts.throttled).toBe(1);
    const throttled = events.filter((event) => event.type === 'throttled');
    expect(throttled).toEqual([expect.objectContaining({ provider: 'loop', retryAfterMs: 300 })]);
    // From when the parent heard of the 429, only requests admitted before it (at most the 4
    // concurrent) may still arrive during the pause.
    const heardAt = throttled[0]?.time ?? 0;
    const accepted = model.counts.acceptedAt.map((at) => performance.timeOrigin + at);
    expect(accepted.filter((at) => at > heardAt && at < heardAt + 300 - 5).length).toBeLessThanOrEqual(4);
    const ends = events.filter((event) => event.type === 'subagent-end');
    expect(ends).toHaveLength(12);
  }, 60_000);
});
