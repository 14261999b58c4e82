/** maxSteps as a stop condition: what a turn at its step limit stops with. */
import { describe, expect, it } from 'vitest';
import { stepCountIs } from '../../../src/driver/step-count.js';

describe('stepCountIs', () => {
  it('is met once the turn has made maxSteps model requests, not before', () => {
    const limit = stepCountIs(3);
    expect([0, 1, 2, 3, 4].map((requests) => limit.isMet({ requests }))).toEqual([false, false, false, true, true]);
  });

  it('names maxSteps in the unrun calls’ result and counts them in the diagnostic', () => {
    const limit = stepCountIs(2);
    expect(limit.notRun).toMatch(/step limit \(maxSteps 2\)/);
    expect(limit.diagnostic(1)).toMatch(/2 model requests \(maxSteps 2\); 1 tool call of/);
    expect(limit.diagnostic(3)).toMatch(/; 3 tool calls of/);
  });
});
