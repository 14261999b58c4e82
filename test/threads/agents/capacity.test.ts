/** SPEC §10.6: a driver waiting for children never holds capacity its descendants need (2 threads). */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Agent, Brood } from '../../../src/index.js';
import { defineTool, scriptedModels } from '../../../src/index.js';
import { deferred } from '../../support/deferred.js';
import { route } from '../../support/route.js';
import { makeBrood, RUNNERS } from '../../support/runtime.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

/** Children per agent by level: 1 root, 2, 8 inner nodes, then 192 leaves — 203 agents in all. */
const FANOUT = [2, 4, 24];
const INNER = 1 + 2 + 8;
const LEAVES = 2 * 4 * 24;

describe.each(RUNNERS)("runner: '%s'", (runner) => {
  it('a tree of 203 agents whose tools await their children (3 levels deep) completes on 2 threads', async () => {
    brood = makeBrood(runner, {
      models: [
        scriptedModels({
          id: 'scripted',
          scripts: [
            {
              match: 'node',
              turns: [{ toolCalls: [{ name: 'spawn_children', arguments: {} }] }, { text: '{{results}}' }],
            },
            { match: 'leaf', turns: [{ text: 'leaf' }] },
          ],
        }),
      ],
    });
    const b = brood;
    const levels = new Map<string, number>();
    let created = 0;
    let maxWaiting = 0;
    let waiting = 0;
    const allInnerWaiting = deferred();
    brood.tools.register(
      defineTool({
        name: 'spawn_children',
        description: 'creates children and waits for all of them',
        parameters: z.object({}),
        concurrencySafe: true,
        execute: async (_args, ctx) => {
          const level = levels.get(ctx.agent!.id) ?? 0;
          const count = FANOUT[level] ?? 0;
          const childIsNode = level + 1 < FANOUT.length;
          const children: Agent[] = [];
          for (let i = 0; i < count; i += 1) {
            const child = await b.createAgent({ model: route });
            levels.set(child.id, level + 1);
            children.push(child);
            created += 1;
          }
          waiting += 1;
          maxWaiting = Math.max(maxWaiting, waiting);
          // The deepest inner nodes hold their turns open until every inner driver is waiting at once.
          if (waiting === INNER) allInnerWaiting.resolve();
          if (level === FANOUT.length - 1) await allInnerWaiting.promise;
          const results = await Promise.all(
            children.map((child) => child.run(childIsNode ? 'node below' : 'leaf below')),
          );
          waiting -= 1;
          await Promise.all(children.map((child) => child.dispose()));
          const completed = results.filter((r) => r.stopReason === 'completed').length;
          const leaves = results.reduce(
            (sum, r) => sum + (childIsNode ? Number(r.output) : r.output === 'leaf' ? 1 : 0),
            0,
          );
          return completed === count ? String(leaves) : `only ${completed} of ${count} completed`;
        },
      }),
    );
    const root = await brood.createAgent({ model: route });
    const result = await root.run('node root');

    expect(result).toMatchObject({ stopReason: 'completed', output: String(LEAVES) });
    expect(created).toBe(202);
    expect(maxWaiting).toBe(INNER); // 11 drivers waited on children at once, on 2 threads
    expect(await brood.sessions.list()).toHaveLength(203);
  });
});
