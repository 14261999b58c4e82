/**
 * The queue's heartbeat (src/wire/heartbeat.ts) on fake time, ticked as the queue runner and `brood host`
 * tick it: when a peer that stopped sending is judged silent, how often this side beats, and that a
 * stall of this process is nobody else's silence. A real host killed behind a real Redis is
 * test/queue/queue-faults.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Heartbeat } from '../../../src/wire/heartbeat.js';
import { FakeClock } from '../../support/fake-clock.js';

const TIMEOUT_MS = 2_000;
const TICK_MS = 100;
const STALL_MS = 1_000;

let clock = new FakeClock();
afterEach(() => {
  clock[Symbol.dispose]();
  clock = new FakeClock();
});

/**
 * A side that ticks every TICK_MS on the fake clock, hearing one peer `heard` batches so far; `stall`
 * stops its ticks (this process is stuck) until `resume`.
 */
function side() {
  const heartbeat = new Heartbeat<string>(TIMEOUT_MS, STALL_MS);
  const state = { heard: 0, silentAt: [] as number[], beatsAt: [] as number[] };
  let stalled = false;
  const tick = (): void => {
    if (stalled) return;
    if (heartbeat.silent([['peer', state.heard]], clock.now()).length > 0) state.silentAt.push(clock.now());
    if (heartbeat.beatDue(clock.now())) state.beatsAt.push(clock.now());
    clock.setTimeout(tick, TICK_MS);
  };
  tick();
  const stall = (): void => {
    stalled = true;
  };
  const resume = (): void => {
    stalled = false;
    tick();
  };
  return { heartbeat, state, stall, resume };
}

describe('heartbeat', () => {
  it('a peer whose batches stop is judged silent once the timeout has passed, not before', () => {
    const { state } = side();
    clock.advance(TIMEOUT_MS);
    expect(state.silentAt).toEqual([]);
    clock.advance(TICK_MS);
    expect(state.silentAt).toEqual([TIMEOUT_MS + TICK_MS]);
  });

  it('a peer whose batches keep coming (its beats among them) is never judged silent', () => {
    const { state } = side();
    for (let elapsed = 0; elapsed < TIMEOUT_MS * 10; elapsed += TIMEOUT_MS / 4) {
      state.heard += 1;
      clock.advance(TIMEOUT_MS / 4);
    }
    expect(state.silentAt).toEqual([]);
  });

  it('beats every quarter timeout, from the first tick', () => {
    const { state } = side();
    clock.advance(TIMEOUT_MS);
    expect(state.beatsAt).toEqual([0, 500, 1_000, 1_500, 2_000]);
  });

  it('a tick long after the last (this process stalled) judges nobody on that silence: the peer gets a whole timeout from then', () => {
    const { state, stall, resume } = side();
    clock.advance(TICK_MS);
    stall();
    clock.advance(TIMEOUT_MS * 3);
    resume();
    expect(state.silentAt).toEqual([]);
    const resumedAt = clock.now();
    clock.advance(TIMEOUT_MS);
    expect(state.silentAt).toEqual([]);
    clock.advance(TICK_MS);
    expect(state.silentAt).toEqual([resumedAt + TIMEOUT_MS + TICK_MS]);
  });

  it('cleared (a job from the parent is news of it), a peer judged silent starts afresh', () => {
    const { heartbeat, state } = side();
    clock.advance(TIMEOUT_MS + TICK_MS);
    expect(state.silentAt).toHaveLength(1);
    heartbeat.clear();
    clock.advance(TIMEOUT_MS);
    expect(state.silentAt).toHaveLength(1);
    clock.advance(TICK_MS * 2);
    expect(state.silentAt).toHaveLength(2);
  });
});
