/**
 * job_output's wait (SPEC §11.6) on fake time: it ends when the job finishes, when its timeout passes
 * (default DEFAULTS.jobWaitMs, clamped to 600 s) or when the call is cancelled — whichever is first —
 * and it never ends the job.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULTS } from '../../../src/defaults.js';
import { clampWait, MAX_WAIT_MS, waitForJob } from '../../../src/delegation/job-tools.js';
import { deferred } from '../../support/deferred.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` has settled, after the microtasks queued so far have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe('job_output wait', () => {
  it('the timeout: unset is the default wait, and no wait is longer than 600 s', () => {
    expect(clampWait(undefined)).toBe(DEFAULTS.jobWaitMs);
    expect(clampWait(1_500)).toBe(1_500);
    expect(clampWait(10 * 3_600_000)).toBe(MAX_WAIT_MS);
    expect(MAX_WAIT_MS).toBe(600_000);
  });

  it('ends at the timeout while the job runs on', async () => {
    const job = deferred();
    const wait = waitForJob({ done: job.promise }, 30_000, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(await settled(wait)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(wait)).toBe(true);
  });

  it('ends as soon as the job finishes, failed jobs included', async () => {
    const job = deferred();
    const wait = waitForJob({ done: job.promise }, 30_000, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(1_000);
    job.reject(new Error('the child failed'));
    expect(await settled(wait)).toBe(true);
    expect(vi.getTimerCount()).toBe(0); // the timeout was cleared
  });

  it('ends when the call is cancelled', async () => {
    const controller = new AbortController();
    const wait = waitForJob({ done: deferred().promise }, 30_000, controller.signal);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    expect(await settled(wait)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
