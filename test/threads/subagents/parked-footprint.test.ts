/**
 * What a parked continuable child (its turn over, waiting for a followup) costs the parent's heap in
 * the objects that make every young-generation GC of the parent longer: weak tables. With 100,000
 * parked children, one WeakMap each made those pauses, which a followup sometimes waits behind,
 * several times longer.
 */
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

/**
 * Counts the WeakMaps this isolate (the parent) constructs while `work` runs. A heap snapshot would
 * count the live ones exactly, but two of them in a loaded suite took longer than the test's budget;
 * a parked child's table was made with its agent and kept for its life, so counting constructions
 * while children park tells the same.
 */
async function weakMapsMadeDuring(work: () => Promise<void>): Promise<number> {
  const Original = globalThis.WeakMap;
  let made = 0;
  globalThis.WeakMap = class CountedWeakMap<K extends WeakKey, V> extends Original<K, V> {
    constructor(entries?: readonly (readonly [K, V])[] | null) {
      super(entries);
      made++;
    }
  } as WeakMapConstructor;
  try {
    await work();
  } finally {
    globalThis.WeakMap = Original;
  }
  return made;
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
    const made = await weakMapsMadeDuring(() => park(h, parent, PARKED));
    expect(h.liveAgents()).toBeGreaterThanOrEqual(2 * PARKED + 1); // all still parked, none disposed
    expect(made).toBeLessThan(PARKED / 4);
  });
});
