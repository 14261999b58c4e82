/** The silence rule shared by the pool's hang watchdog and the queue's peers (src/wire/silence.ts), on an injected clock. */
import { describe, expect, it } from 'vitest';
import { SilenceJudge } from '../../../src/wire/silence.js';

describe('SilenceJudge', () => {
  it('a peer whose heartbeat stops moving is silent once the timeout has passed, not before', () => {
    const judge = new SilenceJudge<string>(100);
    expect(judge.judge([['a', 1]], 0)).toEqual([]);
    expect(judge.judge([['a', 1]], 100)).toEqual([]);
    expect(judge.judge([['a', 1]], 101)).toEqual(['a']);
  });

  it('a moving heartbeat keeps a peer alive however long it runs', () => {
    const judge = new SilenceJudge<string>(100);
    for (let beat = 0, now = 0; now < 1_000; beat++, now += 90) expect(judge.judge([['a', beat]], now)).toEqual([]);
  });

  it('judges each peer on its own', () => {
    const judge = new SilenceJudge<number>(50);
    judge.judge(
      [
        [1, 0],
        [2, 0],
      ],
      0,
    );
    expect(
      judge.judge(
        [
          [1, 0],
          [2, 1],
        ],
        60,
      ),
    ).toEqual([1]);
  });

  it('forgets peers no longer listed: one that comes back starts afresh', () => {
    const judge = new SilenceJudge<string>(100);
    judge.judge([['a', 1]], 0);
    judge.judge([], 50);
    expect(judge.judge([['a', 1]], 150)).toEqual([]);
    expect(judge.judge([['a', 1]], 250)).toEqual([]);
    expect(judge.judge([['a', 1]], 251)).toEqual(['a']);
  });
});
