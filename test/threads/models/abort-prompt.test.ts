/**
 * An abort is prompt whatever the driver waits on — a model request the server never
 * answers or a stream it never ends, the adapter's wait between retries, retries against a port that refuses connections, or a
 * tool that honours its signal. The turn ends `aborted` soon after the abort (the target is 100 ms on a
 * quiet machine; the bound here is generous, for shared CI cores), without a force-stop diagnostic, and
 * the server sees no further request. Real loopback HTTP, real worker threads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Brood, RetryOptions, TurnResult } from '../../../src/index.js';
import { createBrood, defineTool, openAICompatible, scriptedModels } from '../../../src/index.js';
import { holdOpen, json, type Loopback, refusedPort, startLoopback } from '../../unit/models/loopback.js';

type Runner = 'worker' | 'inline';
type AbortPath = 'run signal' | 'agent.cancel()';
const RUNNERS: Runner[] = ['worker', 'inline'];
const PATHS: AbortPath[] = ['run signal', 'agent.cancel()'];
/** Abort → turn end, generously above the 100 ms target (the bench measures the real figure). */
const PROMPT_MS = 1000;
/** Retries that would outlast every bound here if the abort did not reach the adapter's wait. */
const SLOW_RETRIES: RetryOptions = { retries: 5, baseDelayMs: 10_000, maxDelayMs: 10_000 };

let brood: Brood | undefined;
let server: Loopback | undefined;
afterEach(async () => {
  await brood?.close();
  await server?.close();
  brood = undefined;
  server = undefined;
});

const completion = (content: string) =>
  json({ choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });

function openAI(id: string, baseURL: string, retry: RetryOptions) {
  return openAICompatible({ id, baseURL, apiKey: 'test-key', models: ['m'], stream: false, retry });
}

function startTurn(agent: Agent, path: AbortPath): { result: Promise<TurnResult>; abort: () => void } {
  const controller = new AbortController();
  const result = agent.run('hello', { signal: controller.signal });
  return { result, abort: path === 'run signal' ? () => controller.abort() : () => agent.cancel() };
}

/** Aborts the turn and measures how long it took to end. */
async function abortAndTime(turn: ReturnType<typeof startTurn>): Promise<{ result: TurnResult; ms: number }> {
  const at = performance.now();
  turn.abort();
  const result = await turn.result;
  return { result, ms: performance.now() - at };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** A runtime whose one thread already loaded the HTTP adapter (a warm-up turn against the loopback). */
async function warmRuntime(runner: Runner, loopback: Loopback, extra: ReturnType<typeof openAI>[] = []) {
  brood = createBrood({
    runner,
    pool: { threads: 1 },
    models: [openAI('live', `${loopback.base}/v1`, SLOW_RETRIES), ...extra],
  });
  loopback.push(completion('warm'));
  const warm = await brood.createAgent({ model: { provider: 'live', model: 'm' } });
  expect(await warm.run('warm up')).toMatchObject({ stopReason: 'completed', output: 'warm' });
  loopback.reset();
  return brood;
}

function expectPromptAbort({ result, ms }: { result: TurnResult; ms: number }): void {
  expect(result.stopReason).toBe('aborted');
  expect(result.diagnostic).toBeUndefined(); // no force-stop: the driver itself ended the turn
  expect(ms).toBeLessThan(PROMPT_MS);
}

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  describe.each(PATHS)('aborted through the %s', (path) => {
    it('while the model request waits on a server that never answers', async () => {
      server = await startLoopback();
      const runtime = await warmRuntime(runner, server);
      let gone!: () => void;
      const clientGone = new Promise<void>((resolve) => (gone = resolve));
      server.fallback((_req, res) => res.on('close', gone)); // keeps every request open
      const agent = await runtime.createAgent({ model: { provider: 'live', model: 'm' } });
      const turn = startTurn(agent, path);
      const loopback = server;
      await until(() => loopback.seen.length === 1);
      expectPromptAbort(await abortAndTime(turn));
      await clientGone; // the abort reached fetch: the request's connection was closed
      await agent.whenIdle();
      expect(server.seen).toHaveLength(1);
    });

    it('while the model streams an answer that never ends', async () => {
      server = await startLoopback();
      const streaming = openAICompatible({
        id: 'streaming',
        baseURL: `${server.base}/v1`,
        apiKey: 'test-key',
        models: ['m'],
        retry: SLOW_RETRIES,
      });
      const runtime = await warmRuntime(runner, server, [streaming]);
      const open = holdOpen({ data: { choices: [{ index: 0, delta: { content: 'part' }, finish_reason: null }] } });
      server.fallback(open.handler);
      const agent = await runtime.createAgent({ model: { provider: 'streaming', model: 'm' } });
      const turn = startTurn(agent, path);
      const loopback = server;
      await until(() => loopback.seen.length === 1);
      expectPromptAbort(await abortAndTime(turn));
      await open.closed; // the stream's download was stopped
      await agent.whenIdle();
      expect(server.seen).toHaveLength(1);
    });

    it('while the adapter waits to retry after a 503', async () => {
      server = await startLoopback();
      const runtime = await warmRuntime(runner, server);
      let answered = false;
      server.fallback((_req, res) => {
        res.writeHead(503).end('busy');
        answered = true;
      });
      const agent = await runtime.createAgent({ model: { provider: 'live', model: 'm' } });
      const turn = startTurn(agent, path);
      await until(() => answered);
      await new Promise((resolve) => setTimeout(resolve, 50)); // the adapter has read the 503: it waits
      expectPromptAbort(await abortAndTime(turn));
      await agent.whenIdle();
      expect(server.seen).toHaveLength(1);
    });

    it('while it retries against a port that refuses connections', async () => {
      server = await startLoopback();
      const refused = openAI('refused', `http://127.0.0.1:${await refusedPort()}/v1`, SLOW_RETRIES);
      const runtime = await warmRuntime(runner, server, [refused]);
      const agent = await runtime.createAgent({ model: { provider: 'refused', model: 'm' } });
      const turn = startTurn(agent, path);
      await new Promise((resolve) => setTimeout(resolve, 200)); // refused at once: waiting to retry
      expectPromptAbort(await abortAndTime(turn));
    });

    it('while a tool that honours its signal runs', async () => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      brood = createBrood({
        runner,
        pool: { threads: 1 },
        models: [
          scriptedModels({
            id: 'scripted',
            scripts: [
              { match: 'hello', turns: [{ toolCalls: [{ name: 'until_aborted', arguments: {} }] }, { text: 'no' }] },
            ],
          }),
        ],
      });
      brood.tools.register(
        defineTool({
          name: 'until_aborted',
          description: 'returns when its call is aborted',
          parameters: { type: 'object', properties: {} },
          execute: (_args, ctx) =>
            new Promise<string>((resolve) => {
              ctx.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
              started();
            }),
        }),
      );
      const agent = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
      const turn = startTurn(agent, path);
      await running;
      expectPromptAbort(await abortAndTime(turn));
      const requests = (await brood.sessions.read(agent.id)).events.filter((e) => e.type === 'model/request');
      expect(requests).toHaveLength(1);
    });
  });

  it('50 ms into the first run of a fresh runtime whose endpoint refuses connections: aborted, not error', async () => {
    const port = await refusedPort();
    brood = createBrood({
      runner,
      pool: { threads: 1 },
      models: [openAI('refused', `http://127.0.0.1:${port}/v1`, SLOW_RETRIES)],
    });
    const agent = await brood.createAgent({ model: { provider: 'refused', model: 'm' } });
    const turn = startTurn(agent, 'run signal');
    await new Promise((resolve) => setTimeout(resolve, 50)); // the driver may still be starting: a cancel must not be lost
    const { result } = await abortAndTime(turn);
    expect(result.stopReason).toBe('aborted');
    expect(result.diagnostic).toBeUndefined(); // not stopped by force after the cancel grace
  });
});
