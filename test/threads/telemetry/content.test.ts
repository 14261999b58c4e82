/**
 * captureContent over real HTTP: chat spans carry the system instructions, the messages each request
 * sent and the answer, in the GenAI semantic conventions' shapes; tool spans carry arguments and
 * results. Without it, no span carries content — not even a provider's error text.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/index.js';
import { defineTool, openAICompatible } from '../../../src/index.js';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { memoryTracing, spanNamed } from '../../support/otel.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await brood?.close();
  await close?.();
  brood = undefined;
  close = undefined;
});

const route = { provider: 'loop', model: 'm' };
const CONTENT_KEYS = [
  'gen_ai.system_instructions',
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
];

async function weatherBrood(runner: (typeof RUNNERS)[number], captureContent: boolean) {
  const server = await startLoopbackModel({
    toolCall: { name: 'lookup', arguments: { city: 'Oslo' } },
    answer: (toolContent) => `it is ${toolContent}`,
  });
  close = server.close;
  const { provider, exporter } = memoryTracing();
  const models = [openAICompatible({ id: 'loop', baseURL: server.baseURL, models: ['m'], retry: { retries: 0 } })];
  brood = makeBrood(runner, { models, telemetry: { tracerProvider: provider, captureContent } });
  brood.tools.register(
    defineTool({
      name: 'lookup',
      description: "a city's weather",
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      execute: () => 'sunny',
    }),
  );
  const agent = await brood.createAgent({ id: 'asker', model: route, persona: 'You are a terse forecaster.' });
  const result = await agent.run('weather in Oslo?');
  return { result, server, spans: exporter.getFinishedSpans() };
}

const parsed = (span: ReadableSpan | undefined, key: string): unknown => JSON.parse(String(span?.attributes[key]));

function sentSystem(server: LoopbackModel): string {
  const system = server.requests[0]?.body.messages.find((message) => message.role === 'system');
  return system?.content ?? '';
}

describe.each(RUNNERS)('captureContent (%s runner)', (runner) => {
  it('records the prompt each request sent and its answer as GenAI messages, and tool arguments and results', async () => {
    const { result, server, spans } = await weatherBrood(runner, true);
    expect(result.output).toBe('it is sunny');
    const [first, second] = spans.filter((span) => span.name === 'chat m');
    const user = { role: 'user', parts: [{ type: 'text', content: 'weather in Oslo?' }] };
    const call = { type: 'tool_call', id: 'call_loop_1', name: 'lookup', arguments: { city: 'Oslo' } };
    expect(parsed(first, 'gen_ai.input.messages')).toEqual([user]);
    expect(parsed(first, 'gen_ai.output.messages')).toEqual([
      { role: 'assistant', parts: [call], finish_reason: 'tool_call' },
    ]);
    expect(parsed(second, 'gen_ai.input.messages')).toEqual([
      user,
      { role: 'assistant', parts: [call] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_loop_1', response: 'sunny' }] },
    ]);
    expect(parsed(second, 'gen_ai.output.messages')).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'it is sunny' }], finish_reason: 'stop' },
    ]);
    expect(sentSystem(server)).toContain('You are a terse forecaster.');
    expect(parsed(first, 'gen_ai.system_instructions')).toEqual([{ type: 'text', content: sentSystem(server) }]);
    const tool = spanNamed(spans, 'execute_tool lookup');
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({ city: 'Oslo' });
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('sunny');
  });

  it('records no content by default', async () => {
    const { result, spans } = await weatherBrood(runner, false);
    expect(result.output).toBe('it is sunny');
    expect(spans.length).toBeGreaterThan(0);
    for (const span of spans) for (const key of CONTENT_KEYS) expect(span.attributes[key]).toBeUndefined();
  });
});

const SECRET = 'sk-secret-9f2c';
const PROMPT_FRAGMENT = 'the launch code is swordfish';

/** A provider that refuses the key and, like some do, quotes the request back in its error body. */
async function echoingUnauthorized(): Promise<string> {
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const message = `invalid key ${req.headers.authorization ?? ''} for request ${raw}`;
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () => new Promise((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

async function unauthorizedRun(runner: (typeof RUNNERS)[number], telemetry: Partial<BroodOptions['telemetry']>) {
  const baseURL = await echoingUnauthorized();
  const { provider, exporter } = memoryTracing();
  const models = [openAICompatible({ id: 'loop', baseURL, apiKey: SECRET, models: ['m'], retry: { retries: 0 } })];
  brood = makeBrood(runner, { models, telemetry: { tracerProvider: provider, ...telemetry } });
  const result = await (await brood.createAgent({ id: 'asker', model: route })).run(PROMPT_FRAGMENT);
  return { result, spans: exporter.getFinishedSpans() };
}

/** Everything a span exports that a backend could show: attributes, status message, events. */
function exported(span: ReadableSpan): string {
  return JSON.stringify([span.name, span.attributes, span.status, span.events, span.links]);
}

describe.each(RUNNERS)("a provider's error text (%s runner)", (runner) => {
  it('reaches no span without captureContent: the turn fails with its stop reason only', async () => {
    const { result, spans } = await unauthorizedRun(runner, {});
    expect(result.stopReason).toBe('error');
    for (const span of spans) {
      expect(exported(span)).not.toContain(SECRET);
      expect(exported(span)).not.toContain('swordfish');
    }
    const turn = spanNamed(spans, 'invoke_agent asker');
    expect(turn.status).toEqual({ code: 2, message: 'error' });
    expect(turn.attributes['error.type']).toBe('error');
    expect(spanNamed(spans, 'chat m').attributes['error.type']).toBe('error');
  });

  it('stays as the status message with captureContent', async () => {
    const { spans } = await unauthorizedRun(runner, { captureContent: true });
    const message = spanNamed(spans, 'invoke_agent asker').status.message ?? '';
    expect(message).toContain(`Bearer ${SECRET}`);
    expect(message).toContain('swordfish');
  });
});
