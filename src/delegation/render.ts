/**
 * Model-facing texts of delegation results and jobs (SPEC §11.5, §11.6). Pure functions, so every
 * stop reason and status line can be tested without a runtime.
 */

import { FINAL_ANSWER_KEPT } from '../scheduler/budget.js';
import type { Job, JobStatus, SubagentResult } from '../subagents/types.js';
import type { StopReason } from '../types.js';

/** The §11.5 headline for a run that did not complete. */
export function stopHeadline(reason: StopReason | string, diagnostic?: string): string {
  switch (reason) {
    case 'aborted':
      return 'subagent run was cancelled';
    case 'error':
      return 'subagent run failed';
    case 'max-tokens':
      return 'subagent run hit its token limit before finishing';
    case 'refusal':
      return 'subagent declined the task';
    case 'max-steps':
      return 'subagent run hit its step limit';
    case 'budget':
      return `subagent run hit its budget (${budgetKindOf(diagnostic)})`;
    default:
      return `subagent run ended abnormally (${reason})`;
  }
}

/** Which budget ended a run, from its diagnostic ("the run hit its budget (timeout): ..."). */
function budgetKindOf(diagnostic: string | undefined): string {
  return /\(([a-z]+)\)/.exec(diagnostic ?? '')?.[1] ?? 'unknown';
}

/**
 * Headline, then the provider diagnostic, then any partial assistant text — kept apart so a truncated
 * answer is never mistaken for success or for infrastructure detail.
 */
export function failureMessage(result: Pick<SubagentResult, 'stopReason' | 'output' | 'diagnostic'>): string {
  let message = stopHeadline(result.stopReason, result.diagnostic);
  if (result.diagnostic !== undefined && result.diagnostic !== '') message += `\nDiagnostic: ${result.diagnostic}`;
  if (result.output === '') return message;
  // A budget that ran out with the final answer: the answer is whole, only the budget was crossed.
  const final = result.stopReason === 'budget' && result.diagnostic?.endsWith(FINAL_ANSWER_KEPT) === true;
  message += final ? `\nFinal answer:\n${result.output}` : `\nPartial output before the run ended:\n${result.output}`;
  return message;
}

/** Both collection and disposal failed: neither failure may hide the other. */
export function bothFailedMessage(resultError: string, disposeError: string): string {
  return `collecting the subagent result failed: ${resultError}\nDisposing the subagent also failed: ${disposeError}`;
}

export function disposeAfterCompletionMessage(disposeError: string): string {
  return `subagent completed but disposing it failed: ${disposeError}`;
}

export function disposeAfterFailureSuffix(disposeError: string): string {
  return `\nDisposing the subagent also failed: ${disposeError}`;
}

/** The `[status: …]` line of a job; a failed job names its stop reason and diagnostic. */
export function statusLine(status: JobStatus, result: SubagentResult | undefined): string {
  return `[status: ${status}${statusDetail(status, result)}]`;
}

function statusDetail(status: JobStatus, result: SubagentResult | undefined): string {
  if (status !== 'failed' || result === undefined) return '';
  const diagnostic =
    result.diagnostic !== undefined && result.diagnostic !== '' ? `; diagnostic: ${result.diagnostic}` : '';
  return `, ${result.stopReason}${diagnostic}`;
}

/** Maps a finished run's stop reason to its job status (the runtime's table applies the same map). */
export function jobStatusOf(reason: StopReason): JobStatus {
  if (reason === 'completed') return 'completed';
  if (reason === 'aborted') return 'killed';
  return 'failed';
}

export function isFinished(status: JobStatus): boolean {
  return status !== 'running' && status !== 'stopping';
}

/** job_output's text: the same for every read of a finished job. */
export function jobOutputText(job: Pick<Job, 'status' | 'result'>): string {
  const body = !isFinished(job.status) ? '(no new output)' : job.result?.output ? job.result.output : '(no output)';
  return `${body}\n${statusLine(job.status, job.result)}`;
}

export function jobListText(jobs: readonly Pick<Job, 'id' | 'status' | 'label'>[]): string {
  if (jobs.length === 0) return '(no background jobs)';
  return jobs.map((job) => `${job.id} [subagent] ${job.status} — ${job.label}`).join('\n');
}

export function jobKillText(job: Pick<Job, 'id' | 'status' | 'result'>, requested: boolean): string {
  return requested
    ? `requested cancellation of job ${job.id}`
    : `job ${job.id} had already finished ${statusLine(job.status, job.result)}`;
}

export function unknownJobMessage(id: string): string {
  return `unknown job ${id}`;
}
