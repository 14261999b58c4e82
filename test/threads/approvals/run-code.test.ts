/**
 * Approvals inside run_code: a `tools.x()` call that needs approval parks in the parent;
 * the program's promise waits, the busy limit does not run meanwhile, the wall limit does. Real pool
 * and sandbox threads.
 */
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { type Brood, createBrood, defineTool, scriptedModels } from '../../../src/index.js';
import { route } from '../../support/route.js';
import { until } from '../../support/until.js';

let brood: Brood | undefined;

afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const CODE = 'const first = await tools.guarded({ n: 1 }); return first + " / " + (await tools.free({ n: 2 }));';

function start(codeWallTimeoutMs = 60_000): { brood: Brood; runs: string[] } {
  const runs: string[] = [];
  const b = createBrood({
    codeMode: 'code',
    pool: { threads: 1 },
    codeBusyTimeoutMs: 50,
    codeWallTimeoutMs,
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [
          {
            match: 'go',
            turns: [
              { toolCalls: [{ name: 'run_code', arguments: { description: 'guarded', code: CODE } }] },
              { text: 'after: {{results}}' },
            ],
          },
        ],
      }),
    ],
  });
  const make = (name: string, approval?: 'ask') =>
    defineTool({
      name,
      description: name,
      parameters: z.object({ n: z.number() }),
      execute: ({ n }) => {
        runs.push(name);
        return `${name} ${n}`;
      },
      ...(approval ? { approval } : {}),
    });
  b.tools.register(make('guarded', 'ask'));
  b.tools.register(make('free'));
  brood = b;
  return { brood: b, runs };
}

it('the tools.x() promise waits for approval well past the busy limit, then the program goes on', async () => {
  const { brood: b, runs } = start();
  const agent = await b.createAgent({ model: route });
  const turn = agent.run('go');
  await until(() => b.approvals.pending().length === 1);
  expect(b.approvals.pending()[0]).toMatchObject({ tool: 'guarded', args: { n: 1 }, viaCode: true, depth: 0 });
  // Ten busy limits pass while the call waits; the program is not ended for it.
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(runs).toEqual([]);
  await b.approvals.respond(b.approvals.pending()[0]!.approvalId, { approve: true });
  const result = await turn;
  expect(result.output).toContain('guarded 1 / free 2');
  expect(runs).toEqual(['guarded', 'free']);
});

it('the wall limit still runs while a call waits: the program ends CODE_LIMIT and the request expires', async () => {
  const { brood: b, runs } = start(300);
  const agent = await b.createAgent({ model: route });
  const result = await agent.run('go');
  expect(result.output).toContain('codeWallTimeoutMs');
  expect(runs).toEqual([]);
  await until(() => b.approvals.pending().length === 0);
});
