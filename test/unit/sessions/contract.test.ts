/** The behavioural contract every SessionStore honours, run against both built-in stores. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileSessionStore } from '../../../src/sessions/jsonl.js';
import { fileSessions } from '../../../src/sessions/jsonl.js';
import { memorySessions } from '../../../src/sessions/memory.js';
import type { SessionStore } from '../../../src/types.js';
import { expectCode } from '../../support/codes.js';
import { events, header, tempDir } from './helpers.js';

type Factory = { name: string; make: () => Promise<{ store: SessionStore; cleanup: () => Promise<void> }> };

const factories: Factory[] = [
  { name: 'memorySessions', make: async () => ({ store: memorySessions(), cleanup: async () => undefined }) },
  {
    name: 'fileSessions',
    make: async () => {
      const { dir, cleanup } = await tempDir();
      const store: FileSessionStore = fileSessions(dir);
      return {
        store,
        cleanup: async () => {
          await store.close();
          await cleanup();
        },
      };
    },
  },
];

describe.each(factories)('SessionStore contract: $name', ({ make }) => {
  let store: SessionStore;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ store, cleanup } = await make());
  });
  afterEach(async () => cleanup());

  it('creates, appends, flushes and reads back header and events', async () => {
    const h = header('s1', {
      parentSession: 'p0',
      origin: 'subagent',
      delegationDepth: 2,
      seedLength: 0,
      model: { provider: 'x', model: 'y', reasoningEffort: 'high', maxTokens: 100 },
    });
    await store.create(h);
    await store.append('s1', events(0, 3));
    await store.append('s1', events(3, 2));
    await store.flush('s1');
    const { header: got, events: evs } = await store.read('s1');
    expect(got).toEqual(h);
    expect(evs).toEqual(events(0, 5));
  });

  it('reads a fresh session with no events', async () => {
    await store.create(header('empty'));
    expect((await store.read('empty')).events).toEqual([]);
  });

  it('keeps events in call order even when appends are not awaited', async () => {
    await store.create(header('order'));
    await Promise.all([
      store.append('order', events(0, 2)),
      store.append('order', events(2, 1)),
      store.append('order', events(3, 4)),
    ]);
    expect((await store.read('order')).events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('lists headers in creation order', async () => {
    const ids = ['zeta', 'alpha', 'mid', 'beta'];
    for (const id of ids) await store.create(header(id));
    expect((await store.list()).map((h) => h.id)).toEqual(ids);
  });

  it('lists an empty store as []', async () => {
    expect(await store.list()).toEqual([]);
  });

  it('rejects unknown ids with NOT_RESUMABLE', async () => {
    await expectCode(store.read('nope'), 'NOT_RESUMABLE');
    await expectCode(store.append('nope', events(0, 1)), 'NOT_RESUMABLE');
    await expectCode(store.flush('nope'), 'NOT_RESUMABLE');
  });

  it('rejects a duplicate create with INVALID_CONFIG and keeps the original', async () => {
    await store.create(header('dup'));
    await store.append('dup', events(0, 1));
    await expectCode(store.create(header('dup', { delegationDepth: 5 })), 'INVALID_CONFIG');
    const { header: got, events: evs } = await store.read('dup');
    expect(got.delegationDepth).toBe(0);
    expect(evs).toHaveLength(1);
  });

  it.each([-1, 1.5, Number.NaN, '2', 2 ** 53, undefined, null])(
    'rejects delegationDepth %s with INVALID_DEPTH',
    async (depth) => {
      await expectCode(store.create({ ...header('bad'), delegationDepth: depth as number }), 'INVALID_DEPTH');
      await expectCode(store.read('bad'), 'NOT_RESUMABLE');
      expect(await store.list()).toEqual([]);
    },
  );

  it('rejects other header problems with INVALID_CONFIG', async () => {
    await expectCode(store.create({ ...header('h'), id: '' }), 'INVALID_CONFIG');
    await expectCode(store.create({ ...header('h'), createdAt: 'now' as unknown as number }), 'INVALID_CONFIG');
    await expectCode(
      store.create({ ...header('h'), model: { provider: 'p' } as unknown as { provider: string; model: string } }),
      'INVALID_CONFIG',
    );
    await expectCode(store.create({ ...header('h'), origin: 'user' as 'subagent' }), 'INVALID_CONFIG');
    await expectCode(store.create({ ...header('h'), seedLength: -1 }), 'INVALID_CONFIG');
    await expectCode(store.create(null as unknown as ReturnType<typeof header>), 'INVALID_CONFIG');
  });

  it('rejects malformed or non-contiguous events with INVALID_CONFIG and writes nothing', async () => {
    await store.create(header('ev'));
    await expectCode(store.append('ev', [{ seq: 0, time: 1, type: 'x' } as never]), 'INVALID_CONFIG');
    await expectCode(store.append('ev', events(1, 1)), 'INVALID_CONFIG');
    await store.append('ev', events(0, 1));
    await expectCode(store.append('ev', events(0, 1)), 'INVALID_CONFIG');
    expect((await store.read('ev')).events).toEqual(events(0, 1));
  });

  it('does not let callers mutate stored data', async () => {
    const h = header('iso');
    const evs = events(0, 1);
    await store.create(h);
    await store.append('iso', evs);
    h.model.model = 'mutated';
    (evs[0] as { data: Record<string, unknown> }).data.n = 'mutated';
    const first = await store.read('iso');
    first.header.delegationDepth = 99;
    (first.events[0] as { data: Record<string, unknown> }).data.text = 'mutated';
    (await store.list())[0]!.id = 'mutated';
    const again = await store.read('iso');
    expect(again.header).toEqual(header('iso'));
    expect(again.events).toEqual(events(0, 1));
  });

  it('accepts an empty append and flush on a known session', async () => {
    await store.create(header('e'));
    await store.append('e', []);
    await store.flush('e');
    expect((await store.read('e')).events).toEqual([]);
  });
});
