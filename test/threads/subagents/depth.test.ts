/** SPEC §9 "Depth" and §6 header fields: parent + 1, DEPTH_EXCEEDED, runtime depth, resume never lowers. */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BroodError, fileSessions } from '../../../src/index.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { closeAfterEach, type Harness, harness, startChild } from './helpers.js';

const { open, dirs } = closeAfterEach();
function track(h: Harness): Harness {
  open.push(h);
  return h;
}
const SCRIPTS = [
  { match: 'child', turns: [{ text: 'child done' }] },
  { match: 'parent', turns: [{ text: 'parent done' }] },
];

describe('delegation depth', () => {
  it('DEPTH_EXCEEDED with the exact message, and no child session at that depth', async () => {
    const h = track(harness({ scripts: SCRIPTS }));
    const parent = await h.brood.createAgent({ model: route });
    const before = await h.headers();
    let error: unknown;
    try {
      await startChild(h, parent, 'child', { maxDepth: 0 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BroodError);
    expect((error as BroodError).code).toBe('DEPTH_EXCEEDED');
    expect((error as BroodError).message).toBe('subagent depth 1 exceeds maxDepth 0');
    expect(await h.headers()).toEqual(before);
    expect(h.starts).toEqual([]);
  });

  it("records delegationDepth = parent + 1, parentSession and origin; a nested start from the child's turn fails at the cap", async () => {
    const h = track(
      harness({
        scripts: [
          { match: 'child', turns: [{ toolCalls: [{ name: 'nest', arguments: {} }] }, { text: '{{results}}' }] },
          { match: 'grand', turns: [{ text: 'grandchild done' }] },
        ],
      }),
    );
    const { defineTool } = await import('../../../src/index.js');
    h.brood.tools.register(
      defineTool({
        name: 'nest',
        description: 'starts a grandchild with maxDepth 1',
        parameters: { type: 'object', properties: {} },
        execute: async (_args, ctx) => {
          const run = await h.brood.subagents.start('spawn', {
            parent: ctx.agent!,
            prompt: 'grand',
            signal: ctx.signal,
            maxDepth: 1,
          });
          return (await run.result).output;
        },
      }),
    );
    const parent = await h.brood.createAgent({ model: route });
    const run = await startChild(h, parent, 'child', { maxDepth: 1 });
    const result = await run.result;
    await run.dispose();
    expect(result.output).toBe('Error: subagent depth 2 exceeds maxDepth 1');
    const headers = await h.headers();
    expect(headers).toHaveLength(2);
    expect(headers[1]).toMatchObject({ id: run.id, delegationDepth: 1, parentSession: parent.id, origin: 'subagent' });
    expect(h.starts).toMatchObject([{ id: run.id, parentId: parent.id, depth: 1, provider: 'spawn' }]);
    const childEvents = await h.events(run.id);
    expect(childEvents.find((e) => e.type === 'tool/result')?.data).toMatchObject({ errorCode: 'DEPTH_EXCEEDED' });
  });

  it('a parent created with depth: 5 gets a depth-6 child; maxDepth 5 refuses it', async () => {
    const h = track(harness({ scripts: SCRIPTS }));
    const parent = await h.brood.createAgent({ model: route, depth: 5 });
    expect(parent.depth).toBe(5);
    const error = await startChild(h, parent, 'child', { maxDepth: 5 }).catch((e: BroodError) => e);
    expect((error as BroodError).message).toBe('subagent depth 6 exceeds maxDepth 5');
    const run = await startChild(h, parent, 'child', { maxDepth: 6 });
    await run.result;
    await run.dispose();
    const header = (await h.headers()).find((x) => x.id === run.id);
    expect(header?.delegationDepth).toBe(6);
    expect(h.starts[0]?.depth).toBe(6);
  });

  it('resume with a lower depth never lowers it; a malformed stored depth → INVALID_DEPTH', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brood-depth-'));
    dirs.push(dir);
    const first = harness({ scripts: SCRIPTS, inner: fileSessions(dir) });
    const parent = await first.brood.createAgent({ model: route, depth: 5 });
    await parent.run('parent hello');
    const parentId = parent.id;
    await first.brood.close();

    const second = track(harness({ scripts: SCRIPTS, inner: fileSessions(dir) }));
    const resumed = await second.brood.resumeAgent(parentId, { depth: 2 });
    expect(resumed.depth).toBe(5);
    const run = await startChild(second, resumed, 'child', { maxDepth: 6 });
    await run.result;
    await run.dispose();
    expect((await second.headers()).find((x) => x.id === run.id)?.delegationDepth).toBe(6);
    // A higher runtime depth wins over the header (max).
    await second.brood.close();
    open.pop();
    const third = track(harness({ scripts: SCRIPTS, inner: fileSessions(dir) }));
    const higher = await third.brood.resumeAgent(parentId, { depth: 7 });
    expect(higher.depth).toBe(7);
    await expectCode(startChild(third, higher, 'child', { maxDepth: 7 }), 'DEPTH_EXCEEDED');
    await third.brood.close();
    open.pop();

    for (const bad of [-1, 1.5, '3', null]) {
      const file = join(dir, `${parentId}.jsonl`);
      const lines = (await readFile(file, 'utf8')).split('\n');
      const header = JSON.parse(lines[0]!) as Record<string, unknown>;
      header.delegationDepth = bad;
      lines[0] = JSON.stringify(header);
      await writeFile(file, lines.join('\n'));
      const h = harness({ scripts: SCRIPTS, inner: fileSessions(dir) });
      await expectCode(h.brood.resumeAgent(parentId), 'INVALID_DEPTH');
      await h.brood.close();
    }
  });
});
