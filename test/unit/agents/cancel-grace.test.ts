/**
 * Cancel grace (SPEC §10.4) on fake time: what happens when a cancelled turn is still running after
 * pool.cancelGraceMs — held parent-side calls are abandoned first and named, the driver is stopped by
 * force only if it then still does not finish, and a turn that ended meanwhile is left alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { armCancelGrace, type GraceTarget } from '../../../src/agents/cancel-grace.js';
import type { CurrentTurn, HeldCall } from '../../../src/agents/turns.js';
import { FakeClock } from '../../support/fake-clock.js';

const GRACE_MS = 300;

let clock = new FakeClock();
afterEach(() => {
  clock[Symbol.dispose]();
  clock = new FakeClock();
});

/** The parts of a turn cancel grace reads and writes. */
function turnHolding(...held: HeldCall[]): CurrentTurn {
  return { cleanup: [], held: new Set(held), heldDiagnostic: undefined } as unknown as CurrentTurn;
}

function heldCall(name: string, callId: string): HeldCall & { abandoned: string[] } {
  const abandoned: string[] = [];
  return { name, callId, abandoned, abandon: (message) => abandoned.push(message) };
}

function target(current = true): GraceTarget & { stops: string[]; current: boolean } {
  const stops: string[] = [];
  const t = { stops, current, isCurrent: () => t.current, forceStop: (reason: string) => stops.push(reason) };
  return t;
}

describe('cancel grace', () => {
  it('a driver that holds nothing and ignores the cancel is stopped by force once the grace has passed, not before', () => {
    const turn = turnHolding();
    const driver = target();
    armCancelGrace(turn, GRACE_MS, driver, clock);
    clock.advance(GRACE_MS - 1);
    expect(driver.stops).toEqual([]);
    clock.advance(1);
    expect(driver.stops).toEqual([`stopped by force: the driver ignored cancellation for ${GRACE_MS} ms`]);
  });

  it('held parent-side calls are abandoned and named first; the driver gets a second grace before it is stopped', () => {
    const lookup = heldCall('lookup', 'c1');
    const slow = heldCall('slow', 'c2');
    const turn = turnHolding(lookup, slow);
    const driver = target();
    armCancelGrace(turn, GRACE_MS, driver, clock);
    clock.advance(GRACE_MS);
    expect(lookup.abandoned).toEqual([
      `Tool "lookup" ignored cancellation for ${GRACE_MS} ms; its result was abandoned`,
    ]);
    expect(slow.abandoned).toHaveLength(1);
    expect(turn.heldDiagnostic).toBe(
      `cancelled, but tool calls lookup (call c1), slow (call c2) ignored cancellation for ${GRACE_MS} ms; their results were abandoned`,
    );
    expect(driver.stops).toEqual([]);
    clock.advance(GRACE_MS);
    expect(driver.stops).toHaveLength(1);
    // The driver itself ignored the cancel in the end: the diagnostic blames it, not the calls.
    expect(turn.heldDiagnostic).toBeUndefined();
  });

  it('a turn that ended within the grace is left alone; its cleanup clears the timer', () => {
    const ended = turnHolding(heldCall('lookup', 'c1'));
    const gone = target(false);
    armCancelGrace(ended, GRACE_MS, gone, clock);
    clock.advance(GRACE_MS * 3);
    expect(gone.stops).toEqual([]);
    expect(ended.heldDiagnostic).toBeUndefined();

    const finished = turnHolding();
    const driver = target();
    armCancelGrace(finished, GRACE_MS, driver, clock);
    for (const clean of finished.cleanup) clean();
    clock.advance(GRACE_MS * 3);
    expect(driver.stops).toEqual([]);
  });
});
