/**
 * An activation ends, for the parent, when the parent answers its driver's last endTurn with nothing
 * left to claim — not when the driver's thread gets round to reporting its end. On a thread that a
 * thread-mate holds with synchronous work, that report waits for the work to finish, and until now
 * the agent stayed busy (its dispose, and a delegating parent's slot, waited with it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood, SessionEvent } from '../../../src/index.js';
import { memorySessions, moduleAdapter } from '../../../src/index.js';
import { makeBrood } from '../../support/runtime.js';

const BUSY_MS = 800;
const busyThread = moduleAdapter({
  id: 'busy-thread',
  models: ['quick', 'busy'],
  options: { busyMs: BUSY_MS },
  moduleUrl: new URL('./fixtures/busy-thread-adapter.mjs', import.meta.url),
});
const wallClock = () => performance.timeOrigin + performance.now();
const ANSWER_DELAY_MS = 300;

/**
 * Memory sessions whose append of one agent's `turn/end` takes ANSWER_DELAY_MS: the parent answers
 * that agent's endTurn only after it, so the answer reaches the thread while the thread is held.
 */
function slowTurnEnd(slowId: () => string | undefined) {
  const inner = memorySessions();
  return {
    ...inner,
    create: inner.create.bind(inner),
    read: inner.read.bind(inner),
    list: inner.list.bind(inner),
    flush: inner.flush.bind(inner),
    async append(id: string, events: SessionEvent[]) {
      if (id === slowId() && events.some((event) => event.type === 'turn/end'))
        await new Promise((resolve) => setTimeout(resolve, ANSWER_DELAY_MS));
      return inner.append(id, events);
    },
  };
}

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

describe("runner: 'worker'", () => {
  it('an agent whose turn is over is idle while a thread-mate still holds their thread', async () => {
    let quickId: string | undefined;
    brood = makeBrood('worker', { models: [busyThread], pool: { threads: 1 }, sessions: slowTurnEnd(() => quickId) });
    const busy = await brood.createAgent({ model: { provider: 'busy-thread', model: 'busy' } });
    const quick = await brood.createAgent({ model: { provider: 'busy-thread', model: 'quick' } });
    quickId = quick.id;
    const busyRun = busy.run('hold the thread');
    const quickResult = await quick.run('answer at once');
    await quick.dispose();
    const quickIdleAt = wallClock();

    const busyResult = await busyRun;
    expect(quickResult).toMatchObject({ stopReason: 'completed', output: 'quick done' });
    expect(busyResult.stopReason).toBe('completed');
    // The busy step ended at this time on the thread; the quick agent was disposed before it.
    expect(quickIdleAt).toBeLessThan(Number(busyResult.output));
    // Both agents' threads stayed healthy: the late end report of the first was ignored, not fatal.
    const again = await brood.createAgent({ model: { provider: 'busy-thread', model: 'quick' } });
    await expect(again.run('once more')).resolves.toMatchObject({ stopReason: 'completed' });
    await busy.dispose();
    await again.dispose();
  });
});
