/** fileSessions' `sync` option: which appends are fsynced before they resolve, and group commit. */

import { readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, scriptedModels } from '../../../src/index.js';
import type { FileSessionStore } from '../../../src/sessions/jsonl.js';
import { fileSessions } from '../../../src/sessions/jsonl.js';
import type { SessionEvent } from '../../../src/types.js';
import { expectCode } from '../../support/codes.js';
import { inlineBrood } from '../../support/runtime.js';
import { events, header, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const opened: FileSessionStore[] = [];
/** Every fsync any file handle makes while a test runs. */
let fsyncs: { count: number };

function store(options?: Parameters<typeof fileSessions>[1]): FileSessionStore {
  const s = fileSessions(dir, options);
  opened.push(s);
  return s;
}

/** Counts FileHandle#sync calls (the prototype is shared by every handle node:fs/promises opens). */
async function countFsyncs(): Promise<{ count: number }> {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const counter = { count: 0 };
  const original = proto.sync;
  vi.spyOn(proto, 'sync').mockImplementation(function (this: FileHandle) {
    counter.count += 1;
    return original.call(this);
  });
  return counter;
}

function ofType(type: string, from: number, count: number): SessionEvent[] {
  return events(from, count, type);
}

/** Creates the sessions, then resets the count (create fsyncs the new file). */
async function created(s: FileSessionStore, ids: string[]): Promise<void> {
  for (const id of ids) await s.create(header(id));
  fsyncs.count = 0;
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  fsyncs = await countFsyncs();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(opened.splice(0).map((s) => s.close()));
  await cleanup();
});

describe("fileSessions sync: 'turn' (default)", () => {
  it('appends of model answers and tool calls are written, not fsynced', async () => {
    const s = store();
    await created(s, ['a']);
    await s.append('a', ofType('assistant/message', 0, 1));
    await s.append('a', ofType('tool/call', 1, 1));
    expect(fsyncs.count).toBe(0);
    await s.flush('a');
    expect(fsyncs.count).toBe(1);
  });
});

describe('fileSessions flush', () => {
  it('a flush with nothing written since the last fsync makes none (a turn end, then its agent disposed)', async () => {
    const s = store();
    await created(s, ['a']);
    await s.append('a', ofType('turn/end', 0, 1));
    await s.flush('a');
    await s.flush('a');
    expect(fsyncs.count).toBe(1);
    await s.append('a', ofType('user/message', 1, 1));
    await s.flush('a');
    expect(fsyncs.count).toBe(2);
  });

  it('the first flush of a session another process wrote fsyncs it (its writes may not be on disk yet)', async () => {
    const writer = store();
    await created(writer, ['a']);
    await writer.append('a', ofType('user/message', 0, 1));
    await writer.close();
    fsyncs.count = 0;
    const resumed = store();
    await resumed.acquire('a');
    await resumed.flush('a');
    expect(fsyncs.count).toBe(1);
  });
});

describe("fileSessions sync: 'step'", () => {
  it('a model answer and a tool call are fsynced before append resolves', async () => {
    const s = store({ sync: 'step' });
    await created(s, ['a']);
    await s.append('a', ofType('assistant/message', 0, 1));
    expect(fsyncs.count).toBe(1);
    await s.append('a', [...ofType('tool/result', 1, 1), ...ofType('tool/call', 2, 1)]);
    expect(fsyncs.count).toBe(2);
  });

  it('other events are only written (the turn boundary flush makes them durable)', async () => {
    const s = store({ sync: 'step' });
    await created(s, ['a']);
    await s.append('a', ofType('user/message', 0, 1));
    await s.append('a', ofType('tool/result', 1, 1));
    await s.append('a', ofType('model/request', 2, 1));
    expect(fsyncs.count).toBe(0);
  });

  it('many concurrent appends to one session share fsyncs (group commit)', async () => {
    const s = store({ sync: 'step' });
    await created(s, ['a']);
    const appends = Array.from({ length: 64 }, (_, i) => s.append('a', ofType('tool/call', i, 1)));
    await Promise.all(appends);
    expect(fsyncs.count).toBeLessThanOrEqual(2);
    expect((await s.read('a')).events).toHaveLength(64);
  });

  it('concurrent appends across sessions take an fsync or two per session, not one per append', async () => {
    const s = store({ sync: 'step' });
    const ids = ['a', 'b', 'c', 'd'];
    await created(s, ids);
    const appends = ids.flatMap((id) =>
      Array.from({ length: 32 }, (_, i) => s.append(id, ofType('assistant/message', i, 1))),
    );
    await Promise.all(appends);
    expect(fsyncs.count).toBeLessThanOrEqual(2 * ids.length);
  });

  it('concurrent turn-boundary flushes of one session share fsyncs too', async () => {
    const s = store({ sync: 'step' });
    await created(s, ['a']);
    await s.append('a', ofType('user/message', 0, 1));
    await Promise.all(Array.from({ length: 32 }, () => s.flush('a')));
    expect(fsyncs.count).toBeLessThanOrEqual(2);
  });

  it('a failed fsync rejects the append that waited for it', async () => {
    const s = store({ sync: 'step' });
    await created(s, ['a']);
    vi.restoreAllMocks();
    const probe = await open(join(dir, 'probe'), 'r');
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    vi.spyOn(proto, 'sync').mockRejectedValue(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
    await expect(s.append('a', ofType('tool/call', 0, 1))).rejects.toMatchObject({ code: 'EIO' });
  });

  it('close waits for a pending fsync', async () => {
    const s = store({ sync: 'step' });
    await created(s, ['a']);
    const append = s.append('a', ofType('tool/call', 0, 1));
    await s.close();
    await append;
    expect(fsyncs.count).toBeGreaterThanOrEqual(1);
  });
});

/**
 * What happened, in order, through a runtime, seen from the session file: each fsync made while the
 * file already held the `tool/call`, and the tool body starting (noted with whether the `tool/call` was
 * in the file by then). Write before effect under 'step' means such an fsync before the body.
 */
async function orderBeforeToolBody(sync: 'turn' | 'step'): Promise<string[]> {
  const order: string[] = [];
  const probe = await open(join(dir, 'probe2'), 'w');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  vi.restoreAllMocks();
  const sync_ = proto.sync;
  let sessionFile = '';
  const logged = () => sessionFile !== '' && readFileSync(sessionFile, 'utf8').includes('"type":"tool/call"');
  vi.spyOn(proto, 'sync').mockImplementation(function (this: FileHandle) {
    if (logged()) order.push('fsync');
    return sync_.call(this);
  });
  const brood = inlineBrood({
    sessions: store({ sync }),
    models: [
      scriptedModels({
        id: 'scripted',
        scripts: [{ match: 'go', turns: [{ toolCalls: [{ name: 'charge', arguments: {} }] }, { text: 'done' }] }],
      }),
    ],
  });
  try {
    brood.tools.register(
      defineTool({
        name: 'charge',
        description: 'a side effect',
        parameters: { type: 'object', properties: {} },
        execute: () => {
          order.push(logged() ? 'body, its tool/call written' : 'body, its tool/call not written');
          return 'charged';
        },
      }),
    );
    const agent = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });
    sessionFile = join(dir, `${agent.id}.jsonl`);
    expect((await agent.run('go')).stopReason).toBe('completed');
  } finally {
    await brood.close();
  }
  return order.slice(0, order.findIndex((step) => step.startsWith('body')) + 1);
}

describe('sync through a runtime: write before effect becomes durable', () => {
  it("'step': the tool/call is fsynced before the tool body starts", async () => {
    expect(await orderBeforeToolBody('step')).toEqual(['fsync', 'body, its tool/call written']);
  });

  it("'turn': the tool/call is written, not fsynced, before the body", async () => {
    expect(await orderBeforeToolBody('turn')).toEqual(['body, its tool/call written']);
  });
});

describe('fileSessions sync option validation', () => {
  it.each([['always'], [true], [1]])('sync: %j is INVALID_CONFIG', (sync) => {
    expectCode(() => fileSessions(dir, { sync } as never), 'INVALID_CONFIG');
  });
});
