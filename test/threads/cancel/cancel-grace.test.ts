/**
 * When cancel grace runs out on a turn held by the parent — a tool ignoring its
 * signal, a provider whose result never settles — the diagnostic names that call, and the driver
 * (which did honour the cancel) keeps its thread. The grace runs on a fake clock: nothing waits in real time.
 */
import { afterEach, expect, it } from 'vitest';
import type { Brood, SessionEvent, SubagentProvider } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels, subagentTool } from '../../../src/index.js';
import { FakeClock } from '../../support/fake-clock.js';
import { route } from '../../support/route.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const never = new Promise<never>(() => undefined);
const threadsOf = (events: SessionEvent[]) =>
  events.filter((event) => event.type === 'model/request').map((event) => event.data.threadId);

let providerStarted: () => void = () => undefined;
const neverProvider: SubagentProvider = {
  name: 'never',
  capabilities: { persona: true, toolFilter: true, depthLimit: true, agentOptions: true, outputSchema: false },
  inheritsParentContext: false,
  start: async () => {
    providerStarted();
    return { id: 'never-child', result: never, dispose: async () => undefined };
  },
};

it.each([
  ['a tool that ignores its signal', 'stuck', 'stuck (call call_0_0)'],
  ['a provider whose result never settles', 'subagent', 'subagent (call call_0_0)'],
])('%s: the turn ends aborted naming the held call; the thread is not recycled', async (_case, tool, named) => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  using clock = new FakeClock();
  brood = createBrood({
    _internal: { setTimer: clock.setTimeout },
    pool: { threads: 1, cancelGraceMs: 150 },
    providers: [neverProvider],
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'hold',
            turns: [{ toolCalls: [{ name: tool, arguments: { description: 'd', prompt: 'p' } }] }, { text: 'after' }],
          },
        ],
      }),
    ],
  });
  brood.tools.register(
    defineTool({
      name: 'stuck',
      description: 'never settles',
      parameters: { type: 'object', properties: {} },
      execute: () => {
        started();
        return never;
      },
    }),
  );
  brood.use(subagentTool({ provider: 'never' }));
  providerStarted = started;
  const agent = await brood.createAgent({ model: route });
  const controller = new AbortController();
  const result = agent.run('hold on', { signal: controller.signal });
  await running;
  controller.abort();
  clock.advance(150); // the grace runs out on the held call
  const ended = await result;
  expect(clock.timers).toBe(0); // the driver then finished on its own: its second grace was never needed
  expect(ended.stopReason).toBe('aborted');
  expect(ended.diagnostic).toContain(named);
  expect(ended.diagnostic).toContain('ignored cancellation');
  expect(ended.diagnostic).not.toContain('driver ignored');
  expect(await agent.run('once more')).toMatchObject({ stopReason: 'completed' });
  const threads = threadsOf((await brood.sessions.read(agent.id)).events);
  expect(new Set(threads).size).toBe(1); // the same thread served every turn: nothing was recycled
});
