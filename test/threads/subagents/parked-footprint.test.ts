/**
 * What a parked continuable child (its turn over, waiting for a followup) costs the parent's heap in
 * the objects that make every young-generation GC of the parent longer: weak tables. With 100,000
 * parked children, one WeakMap each made those pauses, which a followup sometimes waits behind,
 * several times longer.
 */
import { getHeapSnapshot } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../../src/index.js';
import { route } from '../../support/route.js';
import { closeAfterEach, type Harness, harness, type Script } from './helpers.js';

const { open } = closeAfterEach();

const PARKED = 40;

const SCRIPTS: Script[] = [
  // Every settlement notice may wake the parent: it answers each time.
  { match: 'parent', turns: Array.from({ length: 2 * PARKED + 2 }, () => ({ text: 'parent ok' })) },
  { match: 'cont task', turns: [{ text: 'parked' }, { text: 'followed up' }] },
];

/** Live objects of one constructor in this isolate (a heap snapshot runs a full GC first). */
async function liveObjects(constructorName: string): Promise<number> {
  let json = '';
  for await (const chunk of getHeapSnapshot()) json += chunk;
  const snapshot = JSON.parse(json) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const { node_fields: fields, node_types: types } = snapshot.snapshot.meta;
  const [typeAt, nameAt] = [fields.indexOf('type'), fields.indexOf('name')];
  let count = 0;
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[0][snapshot.nodes[i + typeAt] as number];
    if (type === 'object' && snapshot.strings[snapshot.nodes[i + nameAt] as number] === constructorName) count++;
  }
  return count;
}

async function park(h: Harness, parent: Agent, count: number): Promise<void> {
  const started = [];
  for (let i = 0; i < count; i++) {
    started.push(
      h.brood.subagents.startContinuable({
        provider: 'spawn',
        label: `parked ${i}`,
        signal: new AbortController().signal,
        request: { parent, prompt: `cont task ${i}` },
      }),
    );
  }
  for (const { childId } of await Promise.all(started)) await h.endOf(childId);
}

describe('parked continuable children', () => {
  it('hold no weak table each in the parent', async () => {
    const h = harness({ scripts: SCRIPTS });
    open.push(h);
    const parent = await h.brood.createAgent({ model: route });
    await parent.run('parent hello');
    await park(h, parent, PARKED); // the runtime's one-time weak tables exist by now
    const before = await liveObjects('WeakMap');
    await park(h, parent, PARKED);
    const after = await liveObjects('WeakMap');
    expect(h.liveAgents()).toBeGreaterThanOrEqual(2 * PARKED + 1); // all still parked, none disposed
    expect(after - before).toBeLessThan(PARKED / 4);
  }, 30_000);
});
