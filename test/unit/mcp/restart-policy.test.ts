/**
 * The MCP restart schedule on an injected clock: 0.5 s after a loss, doubling, at most 5 attempts in
 * a row, then attempts only when a call makes one; a row ends only after a connection lived 30 s.
 * (test/processes/mcp/restart.test.ts runs the same schedule against a real server process.)
 */
import { describe, expect, it } from 'vitest';
import { RestartPolicy } from '../../../src/mcp/restart-policy.js';

function clock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return { now: () => time, advance: (ms) => (time += ms) };
}

/** Losses and failed attempts until the policy stops trying on its own: the waits it chose. */
function failUntilGivenUp(policy: RestartPolicy): (number | undefined)[] {
  const waits: (number | undefined)[] = [policy.nextDelay()];
  while (waits.at(-1) !== undefined && waits.length < 20) {
    policy.attempt();
    waits.push(policy.nextDelay());
  }
  return waits;
}

describe('MCP restart policy', () => {
  it('a server that never comes back: 0.5 s, doubling, 5 attempts, then none on its own', () => {
    const time = clock();
    const policy = new RestartPolicy(time.now);
    policy.lost(time.now());
    expect(failUntilGivenUp(policy)).toEqual([500, 1_000, 2_000, 4_000, 8_000, undefined]);
    policy.attempt(); // a call's own attempt, which fails
    expect(policy.nextDelay()).toBeUndefined();
  });

  it('a connection that lived 30 s ends the row; one that died sooner does not', () => {
    const time = clock();
    const policy = new RestartPolicy(time.now);
    for (let i = 0; i < 4; i += 1) policy.attempt(); // four failed attempts, the fifth succeeds
    policy.attempt();
    const connectedAt = time.now();
    time.advance(29_999);
    policy.lost(connectedAt);
    expect(policy.nextDelay()).toBeUndefined(); // died within 30 s: still the same row, which is spent

    const steady = new RestartPolicy(time.now);
    for (let i = 0; i < 5; i += 1) steady.attempt();
    const upAt = time.now();
    time.advance(30_000);
    steady.lost(upAt);
    expect(failUntilGivenUp(steady)).toEqual([500, 1_000, 2_000, 4_000, 8_000, undefined]);
  });
});
