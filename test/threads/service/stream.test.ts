/**
 * agent.stream(): one turn's events, read once; its result with or without reading them; options
 * checked like run()'s but thrown synchronously; a failed turn on the UI message stream.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodEvent } from '../../../src/index.js';
import { createBrood, scriptedModels, subagentTool } from '../../../src/index.js';
import { runtimeOf } from '../../../src/runtime/plugin-access.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { readAsClient } from './ui-client.js';

const subagent = (prompt: string) => ({ name: 'subagent', arguments: { description: `task ${prompt}`, prompt } });

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function scriptedBrood(): Brood {
  const b = createBrood({
    runner: 'worker',
    pool: { threads: 2 },
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          { match: 'delegate', turns: [{ toolCalls: [subagent('child work')] }, { text: 'lead done: {{results}}' }] },
          {
            match: 'two rounds',
            turns: [
              { toolCalls: [subagent('child work')] },
              { text: 'first done' },
              { toolCalls: [subagent('child work')] },
              { text: 'second done: {{results}}' },
            ],
          },
          { match: 'child work', turns: [{ text: 'child finished' }] },
          { match: 'fail', turns: [{ finish: 'error' }] },
        ],
      }),
    ],
  });
  b.use(subagentTool({ provider: 'spawn' }));
  return b;
}

async function collect(events: AsyncIterable<BroodEvent>): Promise<BroodEvent[]> {
  const out: BroodEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('agent.stream()', () => {
  it("yields its own turn's events, children's included, from turn-start to turn-end, then ends", async () => {
    brood = scriptedBrood();
    const lead = await brood.createAgent({ model: route });
    // Streamed while the first turn still runs: its message waits, and the first turn is not its own.
    const first = lead.run('two rounds');
    const stream = lead.stream('and again');
    const events = await collect(stream);
    expect(await first).toMatchObject({ stopReason: 'completed', output: 'first done' });
    const result = await stream.result;
    expect(result).toMatchObject({ stopReason: 'completed', output: 'second done: child finished' });

    expect(events[0]).toMatchObject({ type: 'turn-start', agentId: lead.id, turn: 2 });
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', agentId: lead.id, turn: 2, usage: result.usage });
    // Nothing of the first turn; the turn's child (a new one) is in it.
    const ownTurns = events
      .filter((e) => e.agentId === lead.id && 'turn' in e)
      .map((e) => (e as { turn: number }).turn);
    expect(new Set(ownTurns)).toEqual(new Set([2]));
    const start = events.find((e) => e.type === 'subagent-start');
    expect(start).toBeDefined();
    const childId = (start as Extract<BroodEvent, { type: 'subagent-start' }>).childId;
    expect(events.some((e) => e.agentId === childId && e.type === 'turn-end')).toBe(true);
    expect(events.some((e) => e.type === 'subagent-end' && e.childId === childId)).toBe(true);
  });

  it('is read once: a second iteration, or a UI stream after it, is INVALID_ARGS', async () => {
    brood = scriptedBrood();
    const lead = await brood.createAgent({ model: route });
    const stream = lead.stream('delegate');
    await collect(stream);
    expectCode(() => stream[Symbol.asyncIterator](), 'INVALID_ARGS');
    expectCode(() => stream.toUIMessageStream(), 'INVALID_ARGS');
    expectCode(() => stream.toUIMessageStreamResponse(), 'INVALID_ARGS');

    const other = lead.stream('delegate');
    other.toUIMessageStream();
    expectCode(() => other[Symbol.asyncIterator](), 'INVALID_ARGS');
    await other.result;
  });

  it('settles .result without its events being read, and holds no subscription after the turn', async () => {
    brood = scriptedBrood();
    const lead = await brood.createAgent({ model: route });
    const stream = lead.stream('delegate');
    expect(await stream.result).toMatchObject({ stopReason: 'completed', output: 'lead done: child finished' });
    expect(runtimeOf(brood).agentDeps.hub.active).toBe(false);
    // What was held for a reader is still there for a late one.
    const events = await collect(stream);
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', agentId: lead.id });
    expect((await lead.run('delegate')).stopReason).toBe('completed');
  });

  it('a reader that stops early does not stop the run', async () => {
    brood = scriptedBrood();
    const lead = await brood.createAgent({ model: route });
    const stream = lead.stream('delegate');
    for await (const _event of stream) break;
    expect((await stream.result).stopReason).toBe('completed');
    expect(runtimeOf(brood).agentDeps.hub.active).toBe(false);
  });

  it('checks its options like run() but throws synchronously (INVALID_ARGS); nothing runs', async () => {
    brood = scriptedBrood();
    const lead = await brood.createAgent({ model: route });
    expectCode(() => lead.stream('delegate', { nope: true } as never), 'INVALID_ARGS');
    expectCode(() => lead.stream('delegate', 42 as never), 'INVALID_ARGS');
    expectCode(() => lead.stream('delegate', { signal: 'soon' } as never), 'INVALID_ARGS');
    expectCode(() => lead.stream('delegate', { outputSchema: 'json' } as never), 'INVALID_ARGS');
    expect(runtimeOf(brood).agentDeps.hub.active).toBe(false);
    expect((await brood.sessions.read(lead.id)).events.filter((e) => e.type === 'user/message')).toEqual([]);
  });

  it('a turn that ends error sends an error chunk with its diagnostic, then finish', async () => {
    brood = scriptedBrood();
    const lead = await brood.createAgent({ model: route });
    const stream = lead.stream('fail now');
    const response = stream.toUIMessageStreamResponse({ headers: { 'x-request-id': 'r1' } });
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(response.headers.get('x-request-id')).toBe('r1');
    const read = await readAsClient(response.body!);
    const result = await stream.result;
    expect(result.stopReason).toBe('error');
    expect(result.diagnostic).toBeTruthy();
    expect(read.chunks.slice(-2)).toEqual([
      { type: 'error', errorText: result.diagnostic },
      { type: 'finish', messageMetadata: { usage: result.usage, stopReason: 'error' } },
    ]);
    expect(read.errors).toEqual([result.diagnostic]);
  });

  it('a message that never runs (the agent is disposed): .result and the events reject DISPOSED, the UI stream ends error then finish', async () => {
    brood = scriptedBrood();
    const lead = await brood.createAgent({ model: route });
    await lead.dispose();
    const iterated = lead.stream('delegate');
    await expectCode(iterated.result, 'DISPOSED');
    await expectCode(collect(iterated), 'DISPOSED');

    const read = await readAsClient(lead.stream('delegate').toUIMessageStream().pipeThrough(sseEncoder()));
    expect(read.chunks).toEqual([
      { type: 'start' },
      { type: 'error', errorText: expect.stringMatching(/disposed/) },
      { type: 'finish' },
    ]);
    expect(read.errors).toHaveLength(1);
  });
});

/** The chunks as SSE bytes, the way a route would send them, for the client reader. */
function sseEncoder(): TransformStream<unknown, Uint8Array> {
  const encoder = new TextEncoder();
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
    },
  });
}
