/** SPEC §11.5 and §11.6: rendering of every stop reason, diagnostic, partial output and job line. */
import { describe, expect, it } from 'vitest';
import { clampWait } from '../../../src/delegation/job-tools.js';
import {
  bothFailedMessage,
  failureMessage,
  jobKillText,
  jobListText,
  jobOutputText,
  jobStatusOf,
  statusLine,
  stopHeadline,
} from '../../../src/delegation/render.js';
import type { SubagentResult } from '../../../src/subagents/types.js';

const usage = { inputTokens: 0, outputTokens: 0 };
const result = (extra: Partial<SubagentResult>): SubagentResult => ({
  output: '',
  stopReason: 'completed',
  usage,
  ...extra,
});

describe('foreground failure rendering', () => {
  it.each([
    ['aborted', 'subagent run was cancelled'],
    ['error', 'subagent run failed'],
    ['max-tokens', 'subagent run hit its token limit before finishing'],
    ['refusal', 'subagent declined the task'],
    ['weird', 'subagent run ended abnormally (weird)'],
  ])('%s → %s', (reason, headline) => {
    expect(stopHeadline(reason)).toBe(headline);
    expect(failureMessage({ stopReason: reason as never, output: '' })).toBe(headline);
  });

  it('appends the diagnostic, then the partial output, in that order', () => {
    expect(failureMessage({ stopReason: 'error', output: 'half an answ', diagnostic: 'HTTP 503' })).toBe(
      'subagent run failed\nDiagnostic: HTTP 503\nPartial output before the run ended:\nhalf an answ',
    );
    expect(failureMessage({ stopReason: 'max-tokens', output: 'trunc' })).toBe(
      'subagent run hit its token limit before finishing\nPartial output before the run ended:\ntrunc',
    );
    expect(failureMessage({ stopReason: 'aborted', output: '', diagnostic: 'stopped by force' })).toBe(
      'subagent run was cancelled\nDiagnostic: stopped by force',
    );
  });

  it('keeps both failures when collection and disposal fail', () => {
    const text = bothFailedMessage('store broke', 'dispose broke');
    expect(text).toContain('store broke');
    expect(text).toContain('dispose broke');
  });
});

describe('job rendering', () => {
  it('maps stop reasons to statuses', () => {
    expect(jobStatusOf('completed')).toBe('completed');
    expect(jobStatusOf('aborted')).toBe('killed');
    for (const reason of ['error', 'max-tokens', 'refusal'] as const) expect(jobStatusOf(reason)).toBe('failed');
  });

  it('status lines carry the stop reason and diagnostic for failed jobs only', () => {
    expect(statusLine('running', undefined)).toBe('[status: running]');
    expect(statusLine('completed', result({ output: 'x' }))).toBe('[status: completed]');
    expect(statusLine('killed', result({ stopReason: 'aborted' }))).toBe('[status: killed]');
    expect(statusLine('failed', result({ stopReason: 'max-tokens' }))).toBe('[status: failed, max-tokens]');
    expect(statusLine('failed', result({ stopReason: 'error', diagnostic: 'boom' }))).toBe(
      '[status: failed, error; diagnostic: boom]',
    );
  });

  it('job_output text: (no new output) while running, (no output) when empty, stable when finished', () => {
    expect(jobOutputText({ status: 'running', result: undefined })).toBe('(no new output)\n[status: running]');
    expect(jobOutputText({ status: 'stopping', result: undefined })).toBe('(no new output)\n[status: stopping]');
    expect(jobOutputText({ status: 'completed', result: result({ output: 'done' }) })).toBe(
      'done\n[status: completed]',
    );
    expect(jobOutputText({ status: 'completed', result: result({}) })).toBe('(no output)\n[status: completed]');
    expect(jobOutputText({ status: 'failed', result: result({ stopReason: 'refusal' }) })).toBe(
      '(no output)\n[status: failed, refusal]',
    );
  });

  it('job_list and job_kill texts', () => {
    expect(jobListText([])).toBe('(no background jobs)');
    expect(
      jobListText([
        { id: 'job_1', status: 'running', label: 'scan repo' },
        { id: 'job_2', status: 'failed', label: 'x' },
      ]),
    ).toBe('job_1 [subagent] running — scan repo\njob_2 [subagent] failed — x');
    expect(jobKillText({ id: 'job_1', status: 'stopping', result: undefined }, true)).toBe(
      'requested cancellation of job job_1',
    );
    expect(
      jobKillText({ id: 'job_1', status: 'failed', result: result({ stopReason: 'error', diagnostic: 'd' }) }, false),
    ).toBe('job job_1 had already finished [status: failed, error; diagnostic: d]');
  });

  it('wait defaults to 30 s and is clamped to 600 s', () => {
    expect(clampWait(undefined)).toBe(30_000);
    expect(clampWait(5)).toBe(5);
    expect(clampWait(10_000_000)).toBe(600_000);
  });
});
