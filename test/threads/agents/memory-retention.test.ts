/**
 * The default store through the runtime: a delegation tree's sessions stay readable while any agent of
 * the tree lives, and what is kept after the last one is disposed follows `memorySessions({ retain })`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, SessionStore } from '../../../src/index.js';
import { defineTool, memorySessions, scriptedModels, subagentTool } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function delegatingBrood(runner: (typeof RUNNERS)[number], sessions?: SessionStore): Brood {
  const created = makeBrood(runner, {
    ...(sessions ? { sessions } : {}),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'lead',
            turns: [
              {
                toolCalls: [
                  { name: 'subagent', arguments: { description: 'a', prompt: 'child a' } },
                  { name: 'subagent', arguments: { description: 'b', prompt: 'child b' } },
                ],
              },
              { text: 'lead done' },
            ],
          },
          { match: 'child', turns: [{ toolCalls: [{ name: 'noop', arguments: {} }] }, { text: 'child done' }] },
        ],
      }),
    ],
  });
  created.tools.register(
    defineTool({
      name: 'noop',
      description: 'ok',
      parameters: { type: 'object', properties: {} },
      execute: () => 'ok',
    }),
  );
  created.use(subagentTool({ provider: 'spawn' }));
  return created;
}

async function runTree(runtime: Brood) {
  const lead = await runtime.createAgent({ model: route });
  const result = await lead.run('lead');
  expect(result.stopReason).toBe('completed');
  const ids = (await runtime.sessions.list()).map((header) => header.id);
  return { lead, ids };
}

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it("retain 'none': the tree is readable while its lead lives and gone once it is disposed", async () => {
    brood = delegatingBrood(runner, memorySessions({ retain: 'none' }));
    const { lead, ids } = await runTree(brood);
    expect(ids).toHaveLength(3);
    // The children have finished (and been disposed); the lead still lives: nothing is evicted.
    for (const id of ids) expect((await brood.sessions.read(id)).header.id).toBe(id);
    await lead.dispose();
    for (const id of ids) await expectCode(brood.sessions.read(id), 'NOT_RESUMABLE');
    await expectCode(brood.resumeAgent(lead.id), 'NOT_RESUMABLE');
  });

  it('the default store keeps a recent finished tree: it can be read and resumed', async () => {
    brood = delegatingBrood(runner);
    const { lead, ids } = await runTree(brood);
    await lead.dispose();
    for (const id of ids) expect((await brood.sessions.read(id)).events.length).toBeGreaterThan(0);
    const resumed = await brood.resumeAgent(lead.id);
    expect(resumed.id).toBe(lead.id);
  });
});
