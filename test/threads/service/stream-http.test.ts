/**
 * agent.stream() behind a real `http.createServer` route, read by the real `ai` client
 * (readUIMessageStream): the lead's text, its tool calls (the `subagent` call included) and every
 * descendant's text as `data-subagent` parts, in order, with the turn's usage in `finish`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions, TurnResult } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels, subagentTool } from '../../../src/index.js';
import { collectDiagnostics } from '../../support/diagnostics.js';
import { route } from '../../support/route.js';
import { bodyText, readAsClient } from './ui-client.js';

const subagent = (prompt: string) => ({ name: 'subagent', arguments: { description: `task ${prompt}`, prompt } });

let brood: Brood | undefined;
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections(); // keep-alive sockets of the client would hold close() open
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await brood?.close();
  brood = undefined;
  server = undefined;
});

/**
 * lead → research (→ fares at depth two); then the lead's weather tool fails; then the lead answers.
 * A run that reaches the weather tool reports its throw to `onDiagnostic`.
 */
function tripBrood(onDiagnostic?: BroodOptions['onDiagnostic']): Brood {
  const b = createBrood({
    ...(onDiagnostic === undefined ? {} : { onDiagnostic }),
    runner: 'worker',
    pool: { threads: 2 },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'plan the trip',
            turns: [
              { text: 'Delegating the research.', toolCalls: [subagent('research flights')] },
              { text: 'Checking the weather.', toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
              { text: 'Trip planned.' },
            ],
          },
          {
            match: 'research flights',
            turns: [{ toolCalls: [subagent('compare fares')] }, { text: 'Cheapest flight found.' }],
          },
          { match: 'compare fares', turns: [{ text: 'Fares compared at depth two.' }] },
          { match: 'take your time', latencyMs: 60_000, turns: [{ text: 'never needed' }] },
        ],
      }),
    ],
  });
  b.use(subagentTool({ provider: 'spawn' }));
  b.tools.register(
    defineTool({
      name: 'weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      execute: () => {
        throw new Error('weather service unavailable');
      },
    }),
  );
  return b;
}

/**
 * POST /chat { prompt } → a new agent's streamed run, cancelled when the client goes away; the route
 * keeps each run's result, and when its piping settled, for the test.
 */
async function chatServer(
  b: Brood,
  results: Promise<TurnResult>[],
  piped: Promise<void>[] = [],
  cancelOnClose = true,
): Promise<string> {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const part of req) body += part;
    const { prompt } = JSON.parse(body) as { prompt: string };
    const controller = new AbortController();
    if (cancelOnClose) res.once('close', () => controller.abort());
    const agent = await b.createAgent({ model: route });
    const stream = agent.stream(prompt, { signal: controller.signal });
    results.push(stream.result);
    const piping = stream.pipeUIMessageStreamToResponse(res);
    piped.push(piping);
    await piping;
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/chat`;
}

describe('agent.stream() piped to a Node response', () => {
  it('a two-level delegation reaches the client as text, tool and data parts in order, usage in finish', async () => {
    const reported = collectDiagnostics();
    brood = tripBrood(reported.onDiagnostic);
    const results: Promise<TurnResult>[] = [];
    const url = await chatServer(brood, results);
    const response = await fetch(url, { method: 'POST', body: JSON.stringify({ prompt: 'plan the trip' }) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const [wire, forClient] = response.body!.tee();
    const [raw, read] = await Promise.all([bodyText(wire), readAsClient(forClient)]);
    const result = await results[0]!;
    expect(result.stopReason).toBe('completed');
    const leadId = result.usageTree.agentId;
    const childId = result.usageTree.children[0]!.agentId;

    expect(read.errors).toEqual([]);
    expect(read.message?.parts).toMatchObject([
      { type: 'text', text: 'Delegating the research.', state: 'done' },
      {
        type: 'tool-subagent',
        state: 'output-available',
        input: { prompt: 'research flights' },
        output: 'Cheapest flight found.',
      },
      {
        type: 'data-subagent',
        id: childId,
        data: { agentId: childId, parentId: leadId, depth: 1, text: 'Cheapest flight found.', status: 'completed' },
      },
      {
        type: 'data-subagent',
        data: { parentId: childId, depth: 2, text: 'Fares compared at depth two.', status: 'completed' },
      },
      { type: 'text', text: 'Checking the weather.', state: 'done' },
      {
        type: 'tool-weather',
        state: 'output-error',
        input: { city: 'Oslo' },
        errorText: 'Error: weather service unavailable',
      },
      { type: 'text', text: 'Trip planned.', state: 'done' },
    ]);
    expect(read.message?.parts).toHaveLength(7);
    expect(read.message?.metadata).toEqual({ usage: result.usage, stopReason: 'completed' });

    const types = read.chunks.map((chunk) => chunk.type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('finish');
    expect(types.filter((type) => type === 'finish')).toHaveLength(1);
    expect(read.chunks.at(-1)).toEqual({
      type: 'finish',
      messageMetadata: { usage: result.usage, stopReason: 'completed' },
    });
    // The children's progress streams while the subagent call runs: after its input, before its output.
    const dataAt = types.flatMap((type, index) => (type === 'data-subagent' ? [index] : []));
    expect(Math.min(...dataAt)).toBeGreaterThan(types.indexOf('tool-input-available'));
    expect(Math.max(...dataAt)).toBeLessThan(types.indexOf('tool-output-available'));
    // Each data chunk carries the child's whole text so far (it replaces the earlier one); none is transient.
    const seen = new Map<string, string>();
    for (const chunk of read.chunks) {
      if (chunk.type !== 'data-subagent') continue;
      expect(chunk).not.toHaveProperty('transient');
      const { text } = chunk.data as { text: string };
      expect(text.startsWith(seen.get(chunk.id!) ?? '')).toBe(true);
      seen.set(chunk.id!, text);
    }
    expect(seen.size).toBe(2);

    // The wire: one `data: <json>` event per chunk, ended by `data: [DONE]`.
    const events = raw.split('\n\n').filter((event) => event !== '');
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)))).toEqual(read.chunks);
    // The weather tool's throw reached the host too, not only the client.
    expect(reported.messages.length).toBeGreaterThanOrEqual(1);
  });

  it('a client that goes away ends the piping; the route cancels the run through its signal', async () => {
    brood = tripBrood();
    const results: Promise<TurnResult>[] = [];
    const piped: Promise<void>[] = [];
    await leaveEarly(await chatServer(brood, results, piped));
    await piped[0];
    expect((await results[0]!).stopReason).toBe('aborted');
  });

  it('without a signal, a client that goes away ends the piping and the run goes on', async () => {
    brood = tripBrood();
    const results: Promise<TurnResult>[] = [];
    const piped: Promise<void>[] = [];
    await leaveEarly(await chatServer(brood, results, piped, false));
    await piped[0];
    // The model takes a minute: the run is still going when the piping is over.
    expect(await Promise.race([results[0]!.then(() => 'settled'), Promise.resolve('running')])).toBe('running');
  });
});

/** Starts a slow run, reads until the stream has started (the model is still thinking), then leaves. */
async function leaveEarly(url: string): Promise<void> {
  const leaving = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    body: JSON.stringify({ prompt: 'take your time' }),
    signal: leaving.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  while (!seen.includes('"type":"start"')) seen += decoder.decode((await reader.read()).value);
  leaving.abort();
}
