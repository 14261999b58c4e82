/**
 * Write before effect (docs/sessions.md "Crash resume"): a tool body starts only once its call's
 * `tool/call` record, and the assistant message that asked for it, are in the store — a completed
 * write, whatever the store's latency. A store whose writes are slow must never see a body run
 * ahead of its record: that is what lets a resumed session tell "never ran" from "outcome unknown".
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, SessionEvent, SessionStore } from '../../../src/index.js';
import { defineTool, memorySessions, scriptedModels } from '../../../src/index.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** Every append lands in the inner store only after a few milliseconds (a slow disk). */
function slowStore(): { store: SessionStore; written: (id: string) => Promise<SessionEvent[]> } {
  const inner = memorySessions();
  const store: SessionStore = {
    ...inner,
    async append(id, events) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      await inner.append(id, events);
    },
  };
  return { store, written: async (id) => (await inner.read(id)).events };
}

const calls = (n: number) => Array.from({ length: n }, (_, i) => ({ name: 'observe', arguments: { i } }));

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it.each([
    ['a parent-run batch of parallel calls', 3, true],
    ['a single exclusive call', 1, false],
  ])('%s: each body sees its tool/call and the assistant message already written', async (_, n, parallel) => {
    const { store, written } = slowStore();
    brood = makeBrood(runner, {
      sessions: store,
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [{ match: 'go', turns: [{ toolCalls: calls(n) }, { text: 'done' }] }],
        }),
      ],
    });
    const seen: { callId: string; logged: boolean; answered: boolean }[] = [];
    brood.tools.register(
      defineTool({
        name: 'observe',
        description: 'reads the store when it runs',
        parameters: { type: 'object', properties: { i: { type: 'number' } } },
        concurrencySafe: parallel,
        execute: async (_args, ctx) => {
          const events = await written(ctx.agent?.id ?? '');
          seen.push({
            callId: ctx.callId,
            logged: events.some((e) => e.type === 'tool/call' && e.data.callId === ctx.callId),
            answered: events.some((e) => e.type === 'assistant/message'),
          });
          return 'ok';
        },
      }),
    );
    const agent = await brood.createAgent({ model: route });
    await expect(agent.run('go')).resolves.toMatchObject({ stopReason: 'completed', output: 'done' });
    expect(seen).toHaveLength(n);
    for (const body of seen) expect(body).toMatchObject({ logged: true, answered: true });
  });
});
