/**
 * Governed fan-out on real pool threads against a real loopback Chat Completions server that counts
 * what it sees: provider limits held under a 256-child fan-out, a retry-after seen by every agent, a
 * deep tree under a tiny agent limit, and the events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, BroodOptions } from '../../../src/brood.js';
import { subagentTool } from '../../../src/delegation/index.js';
import { defineTool } from '../../../src/index.js';
import { openAICompatible } from '../../../src/models/openai.js';
import { scriptedModels } from '../../../src/models/scripted.js';
import type { BroodEvent } from '../../../src/types.js';
import { subagentCall } from '../../support/fan-out.js';
import { type LoopbackModel, startLoopbackModel } from '../../support/loopback-model.js';
import { route } from '../../support/route.js';
import { workerBrood } from '../../support/runtime.js';

let brood: Brood | undefined;
let server: LoopbackModel | undefined;
afterEach(async () => {
  await brood?.close();
  await server?.close();
  brood = undefined;
  server = undefined;
});

const delegate = (prompt: string) => subagentCall(prompt);

/** A scripted root that delegates `n` children in one message; the children ask the loopback provider. */
async function fanOut(
  n: number,
  options: Partial<BroodOptions>,
  serverOptions: Parameters<typeof startLoopbackModel>[0],
  setUp?: (brood: Brood) => void,
) {
  server = await startLoopbackModel(serverOptions);
  const prompts = Array.from({ length: n }, (_, i) => `child ${i}`);
  brood = workerBrood({
    maxParallelToolCalls: n,
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [{ match: 'fan out', turns: [{ toolCalls: prompts.map(delegate) }, { text: 'all done' }] }],
      }),
      openAICompatible({ id: 'loop', baseURL: server.baseURL, models: ['m'], acceptsUnlistedModels: true }),
    ],
    ...options,
  });
  brood.use(subagentTool({ provider: 'spawn', agentOptions: { provider: 'loop', model: 'm' } }));
  setUp?.(brood);
  const events: BroodEvent[] = [];
  const collecting = (async () => {
    for await (const event of brood.events()) events.push(event);
  })();
  const root = await brood.createAgent({ model: route });
  const result = await root.run('fan out');
  return { result, events, collecting, root };
}

describe('limits on a real provider', () => {
  it('holds limits.providers.concurrent under a 256-child fan-out: the server never sees more, none is refused', async () => {
    const { result } = await fanOut(
      256,
      { limits: { providers: { loop: { concurrent: 8 } } } },
      { answer: () => 'ok', latencyMs: 5, limit: { concurrent: 8, retryAfterMs: 50 } },
    );
    expect(result.stopReason).toBe('completed');
    expect(server?.counts.maxInFlight).toBeLessThanOrEqual(8);
    expect(server?.counts.maxInFlight).toBeGreaterThan(1);
    expect(server?.counts.throttled).toBe(0);
    expect(server?.requests.length).toBe(256);
    expect(brood?.scheduler.stats()).toMatchObject({ queued: 0, inFlight: { loop: 0 } });
  });

  it('holds the limit when requests after tool results are admitted ahead: none leaks, none is refused', async () => {
    const note = defineTool({
      name: 'note',
      description: 'takes a note',
      parameters: { type: 'object', properties: {} },
      execute: () => 'noted',
    });
    const { result } = await fanOut(
      64,
      { limits: { providers: { loop: { concurrent: 4 } } } },
      {
        toolCall: { name: 'note', arguments: {} },
        answer: () => 'ok',
        latencyMs: 5,
        limit: { concurrent: 4, retryAfterMs: 50 },
      },
      (brood) => brood.tools.register(note),
    );
    expect(result.stopReason).toBe('completed');
    expect(server?.requests.length).toBe(128); // the tool call, then the answer
    expect(server?.counts.maxInFlight).toBeLessThanOrEqual(4);
    expect(server?.counts.throttled).toBe(0);
    expect(brood?.scheduler.stats()).toMatchObject({ queued: 0, inFlight: { loop: 0 } });
  });

  it("paces a provider's requestsPerMinute: 32 one-request children reach the server no faster than the limit", async () => {
    const { result } = await fanOut(
      32,
      { limits: { providers: { loop: { requestsPerMinute: 6_000 } } } },
      { answer: () => 'ok' },
    );
    expect(result.stopReason).toBe('completed');
    const accepted = [...(server?.counts.acceptedAt ?? [])].sort((a, b) => a - b);
    expect(accepted).toHaveLength(32);
    // 100 a second: 31 spacings of 10 ms between the first and the last, less a little arrival jitter.
    // Unpaced (first requests admitted with their plans, say), all 32 arrive within a few ms.
    expect((accepted.at(-1) ?? 0) - (accepted[0] ?? 0)).toBeGreaterThan(31 * 10 * 0.8);
  });

  it('without limits the same fan-out exceeds what the server allows (the test can fail)', async () => {
    const { result } = await fanOut(32, {}, { answer: () => 'ok', latencyMs: 20 });
    expect(result.stopReason).toBe('completed');
    expect(server?.counts.maxInFlight).toBeGreaterThan(8);
  });

  it("pauses every agent's requests after one 429 with retry-after, and emits throttled", async () => {
    const { result, events } = await fanOut(
      16,
      { limits: { providers: { loop: { concurrent: 4 } } } },
      { answer: () => 'ok', limit: { throttleFirst: 1, retryAfterMs: 300 } },
    );
    expect(result.stopReason).toBe('completed');
    const counts = server?.counts;
    expect(counts?.throttled).toBe(1);
    const throttled = events.filter((event) => event.type === 'throttled');
    expect(throttled).toEqual([expect.objectContaining({ provider: 'loop', retryAfterMs: 300 })]);
    // The pause runs from when the parent heard of the 429 (the event's time). Until then, requests go
    // on being admitted — with no latency, a few finish and are replaced meanwhile — and the ones
    // admitted before it (at most the 4 concurrent) may still arrive during the pause; no other may.
    const heardAt = throttled[0]?.time ?? 0;
    const accepted = (counts?.acceptedAt ?? []).map((at) => performance.timeOrigin + at);
    const during = accepted.filter((at) => at > heardAt && at < heardAt + 300 - 5);
    expect(during.length).toBeLessThanOrEqual(4);
  });

  it('pauses the provider before a 429 frees its slot: no request reaches the server during the pause', async () => {
    // Three requests are in flight (300 ms each) when the fourth is refused for 1 s.
    const { result } = await fanOut(
      8,
      { limits: { providers: { loop: { concurrent: 4 } } } },
      { answer: () => 'ok', latencyMs: 300, limit: { throttleArrival: 4, retryAfterMs: 1_000 } },
    );
    expect(result.stopReason).toBe('completed');
    const counts = server?.counts;
    const refusedAt = counts?.throttledAt[0] ?? 0;
    expect(counts?.throttled).toBe(1);
    // The parent heard of the 429 after the server sent it: its pause ends no sooner than 1 s after that.
    const during = (counts?.acceptedAt ?? []).filter((at) => at > refusedAt && at < refusedAt + 1_000);
    expect(during).toEqual([]);
    expect(counts?.acceptedAt.length).toBe(8);
  });

  it('fails a governed request whose retry-after passes maxRetryAfterMs at once, pausing nobody', async () => {
    const { result, events } = await fanOut(
      4,
      { limits: { providers: { loop: { concurrent: 4 } } } },
      { answer: () => 'ok', limit: { throttleFirst: 1, retryAfterMs: 99_999_000 } },
    );
    expect(result.stopReason).toBe('completed');
    expect(server?.requests).toHaveLength(4); // the refused request was not asked again
    expect(events.filter((event) => event.type === 'throttled')).toEqual([]);
    expect(brood?.scheduler.stats().throttledMs).toBe(0);
    expect(JSON.stringify(events)).toContain('more than maxRetryAfterMs (60000 ms)');
  });
});

describe('limits.agents', () => {
  it('completes a depth-3 tree under agents: 2 (a waiting parent holds no slot) and never runs more than 2', async () => {
    const children = (prefix: string, depth: number) =>
      depth === 3
        ? [{ text: `leaf ${prefix}` }]
        : [{ toolCalls: [1, 2, 3].map((i) => delegate(`${prefix}.${i}`)) }, { text: `node ${prefix}` }];
    const scripts = [{ match: 'root', turns: children('r', 0) }];
    const add = (prefix: string, depth: number): void => {
      if (depth > 3) return;
      scripts.push({ match: `/^${prefix.replace(/\./g, '\\.')}$/`, turns: children(prefix, depth) });
      for (const i of [1, 2, 3]) add(`${prefix}.${i}`, depth + 1);
    };
    for (const i of [1, 2, 3]) add(`r.${i}`, 1);
    brood = workerBrood({
      limits: { agents: 2 },
      models: [scriptedModels({ id: 'scripted', scripts: scripts.map((s) => ({ ...s, latencyMs: 2 })) })],
    });
    brood.use(subagentTool({ provider: 'spawn', maxDepth: 3 }));
    let started = 0;
    brood.subagents.on('start', () => (started += 1));
    let maxRunning = 0;
    const sampling = (async () => {
      for await (const _ of brood.events()) maxRunning = Math.max(maxRunning, brood.scheduler.stats().running);
    })();
    const root = await brood.createAgent({ model: route });
    const result = await root.run('root');
    expect(result.stopReason).toBe('completed');
    expect(result.output).toBe('node r');
    expect(started).toBe(3 + 9 + 27);
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(maxRunning).toBeGreaterThan(0);
    await brood.close();
    await sampling;
  });

  it('emits queued (agent, position) and admitted (waitedMs) for a turn that waited', async () => {
    brood = workerBrood({
      limits: { agents: 1 },
      models: [
        scriptedModels({ id: 'scripted', scripts: [{ match: 'slow', latencyMs: 50, turns: [{ text: 'ok' }] }] }),
      ],
    });
    const events: BroodEvent[] = [];
    const collecting = (async () => {
      for await (const event of brood.events()) events.push(event);
    })();
    const a = await brood.createAgent({ model: route });
    const b = await brood.createAgent({ model: route });
    const results = await Promise.all([a.run('slow'), b.run('slow')]);
    expect(results.map((r) => r.stopReason)).toEqual(['completed', 'completed']);
    const queued = events.filter((event) => event.type === 'queued');
    expect(queued).toEqual([expect.objectContaining({ agentId: b.id, what: 'agent', position: 1 })]);
    const admitted = events.find((event) => event.type === 'admitted');
    expect(admitted).toMatchObject({ agentId: b.id, what: 'agent' });
    expect((admitted as { waitedMs: number }).waitedMs).toBeGreaterThan(0);
    await brood.close();
    await collecting;
  });
});
