/**
 * What memorySessions keeps once a tree's agents are disposed: a tree (a top-level session and every
 * session created under it) is live while any of its sessions is held and is never evicted then; a
 * finished tree is kept ('all'), dropped at once ('none') or kept among the most recent up to a byte
 * budget ('recent', the default). An evicted session reads as NOT_RESUMABLE, like one never written.
 */
import { describe, expect, it } from 'vitest';
import { memorySessions } from '../../../src/sessions/memory.js';
import type { SessionStore } from '../../../src/types.js';
import { expectCode } from '../../support/codes.js';
import { events, header } from './helpers.js';

/** A root session with `children` child sessions, each created, acquired and given a few events. */
async function tree(store: SessionStore, root: string, children = 2, text = 'x'.repeat(100)): Promise<string[]> {
  const ids = [root, ...Array.from({ length: children }, (_, i) => `${root}-c${i}`)];
  for (const id of ids) {
    await store.create(header(id, id === root ? {} : { parentSession: root, origin: 'subagent', delegationDepth: 1 }));
    await store.acquire?.(id);
    await store.append(
      id,
      events(0, 3).map((event) => ({ ...event, data: { text } })),
    );
  }
  return ids;
}

const release = async (store: SessionStore, ids: string[]) => {
  for (const id of ids) await store.release?.(id);
};
const readable = async (store: SessionStore, id: string) =>
  store.read(id).then(
    () => true,
    () => false,
  );

describe('memorySessions retention', () => {
  it("'none' drops a tree whole when its last session is released, and never before", async () => {
    const store = memorySessions({ retain: 'none' });
    const [root, child0, child1] = await tree(store, 'r1');
    await release(store, [child0 as string, child1 as string]);
    // The children are disposed, but the root is live: the whole tree stays.
    for (const id of [root, child0, child1]) expect(await readable(store, id as string)).toBe(true);
    await release(store, [root as string]);
    for (const id of [root, child0, child1]) await expectCode(store.read(id as string), 'NOT_RESUMABLE');
    expect(await store.list()).toEqual([]);
  });

  it("'none' keeps a tree while a child is still held after its root was released (a continuable child)", async () => {
    const store = memorySessions({ retain: 'none' });
    const [root, child0, child1] = (await tree(store, 'r1')) as [string, string, string];
    await release(store, [root, child0]);
    expect(await readable(store, root)).toBe(true);
    await release(store, [child1]);
    expect(await readable(store, root)).toBe(false);
  });

  it("'all' keeps every finished tree", async () => {
    const store = memorySessions({ retain: 'all' });
    for (let i = 0; i < 5; i++) await release(store, await tree(store, `r${i}`));
    expect((await store.list()).length).toBe(15);
  });

  it("'recent' evicts the oldest finished trees first once over its byte budget, never a live one", async () => {
    // One tree of three sessions with 100-character texts is a few KB; a 10 KB budget keeps the last few.
    const store = memorySessions({ retain: 'recent', retainBytes: 10_000 });
    const live = await tree(store, 'live');
    for (let i = 0; i < 20; i++) await release(store, await tree(store, `r${i}`));
    const roots = (await store.list()).filter((h) => h.parentSession === undefined).map((h) => h.id);
    expect(roots[0]).toBe('live');
    expect(roots).toContain('r19');
    expect(roots).not.toContain('r0');
    expect(roots.length).toBeLessThan(21);
    // Kept trees are whole: every kept root still has both children.
    const kept = await store.list();
    for (const root of roots) expect(kept.filter((h) => h.parentSession === root).length).toBe(2);
    for (const id of live) expect(await readable(store, id)).toBe(true);
  });

  it("'recent' is the default: a disposed agent's tree is still readable", async () => {
    const store = memorySessions();
    const ids = await tree(store, 'r1');
    await release(store, ids);
    for (const id of ids) expect(await readable(store, id)).toBe(true);
  });

  it('a finished tree acquired again (resumed) is live and leaves the eviction queue', async () => {
    const store = memorySessions({ retain: 'recent', retainBytes: 10_000 });
    const first = await tree(store, 'first');
    await release(store, first);
    await store.acquire?.('first');
    for (let i = 0; i < 20; i++) await release(store, await tree(store, `r${i}`));
    expect(await readable(store, 'first')).toBe(true);
    await store.release?.('first');
    for (let i = 20; i < 40; i++) await release(store, await tree(store, `r${i}`));
    expect(await readable(store, 'first')).toBe(false);
  });

  it('a session never acquired (a store used by hand) is kept', async () => {
    const store = memorySessions({ retain: 'none' });
    await store.create(header('hand'));
    await store.release?.('hand');
    expect(await readable(store, 'hand')).toBe(true);
  });

  it('refuses options it does not know with INVALID_CONFIG', () => {
    expectCode(() => memorySessions({ retain: 'forever' as never }), 'INVALID_CONFIG');
    expectCode(() => memorySessions({ retainBytes: -1 }), 'INVALID_CONFIG');
    expectCode(() => memorySessions({ keep: 1 } as never), 'INVALID_CONFIG');
  });
});
