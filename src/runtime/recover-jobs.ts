/**
 * Background jobs an agent's log announced (the call's result, `started background subagent job
 * job_<n>`, is logged), rebuilt whenever that agent is restored: a job whose child still has work is
 * resumed and adopted again under its id (its owner gets its notice once, when the child is done); a
 * job whose child had finished is known again with its logged result (job_output reads it), and its
 * notice is delivered if the crash came before it was written, so it arrives exactly once.
 */
import type { AgentImpl } from '../agents/agent.js';
import { openTurnOf } from '../agents/open-turn.js';
import { endedResultOf, pendingResultOf } from '../agents/recovered-turn.js';
import { errorMessage } from '../errors.js';
import { childOfCall, subagentDescriptorOf } from '../sessions/child-index.js';
import { knownEvent } from '../sessions/event-types.js';
import { toSubagentResult } from '../subagents/runs.js';
import type { JobTable, SubagentResult } from '../subagents/types.js';
import type { SessionEvent, SessionHeader, SessionStore, TurnResult } from '../types.js';

export type Session = { header: SessionHeader; events: SessionEvent[] };

/** A job as its owner's log shows it. */
export interface LoggedJob {
  jobId: string;
  callId: string;
  /** The owner's log has the job's `job-completed` notice. */
  noticed: boolean;
}

export interface JobsHost {
  store: SessionStore;
  jobs: JobTable;
  restore(sessionId: string): Promise<AgentImpl>;
  /** Told when a job's child cannot be read or resumed (the job then reads as failed). */
  report?(message: string): void;
}

const ANNOUNCED = /^started background subagent job (job_\d+)$/;

/** The jobs `events` (an owner's log) announced, in order. */
export function loggedJobs(events: readonly SessionEvent[]): LoggedJob[] {
  const jobs: LoggedJob[] = [];
  const noticed = new Set<string>();
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'tool/result') {
      const jobId = event.data.isError ? undefined : ANNOUNCED.exec(event.data.content)?.[1];
      if (jobId !== undefined) jobs.push({ jobId, callId: event.data.callId, noticed: false });
    } else if (event?.type === 'user/message' && event.data.source === 'job-completed') {
      const jobId = /^background job (job_\d+) /.exec(event.data.text)?.[1];
      if (jobId !== undefined) noticed.add(jobId);
    }
  }
  for (const job of jobs) job.noticed = noticed.has(job.jobId);
  return jobs;
}

/**
 * Read before the owner is rebuilt (each announced job's child found by its call id); what it returns
 * registers the jobs on the rebuilt owner before it takes any turn, so job_output knows them at once.
 */
export async function prepareOwnedJobs(
  host: JobsHost,
  ownerId: string,
  events: readonly SessionEvent[],
): Promise<((owner: AgentImpl) => void) | undefined> {
  const jobs = loggedJobs(events);
  if (jobs.length === 0) return undefined;
  const found = await Promise.all(
    jobs.map(async (job) => {
      try {
        const childId = await childOfCall(host.store, ownerId, job.callId);
        return childId === undefined ? undefined : { job, childId, events: (await host.store.read(childId)).events };
      } catch (error) {
        // A job's child that cannot be read (deleted, corrupt) costs that job, not its owner's restore.
        host.report?.(`background job ${job.jobId} of ${ownerId} is not known again: ${errorMessage(error)}`);
        return undefined;
      }
    }),
  );
  return (owner) => {
    for (const entry of found) if (entry !== undefined) adopt(host, owner, entry.job, entry.childId, entry.events);
  };
}

function adopt(host: JobsHost, owner: AgentImpl, job: LoggedJob, childId: string, events: SessionEvent[]): void {
  if (host.jobs.get(owner, job.jobId) !== undefined) return;
  const label = subagentDescriptorOf(events)?.label;
  const controller = new AbortController();
  const ended = openTurnOf(events) === undefined ? endedResultOf(events) : undefined;
  if (ended !== undefined) {
    const run = { id: childId, result: Promise.resolve(toSubagentResult(ended)), dispose: () => Promise.resolve() };
    host.jobs.create(owner, run, labelOf(label), controller, { id: job.jobId, notifyOwner: noticeLost(job, ended) });
    return;
  }
  let disposeChild: () => Promise<void> = () => Promise.resolve();
  const result = host.restore(childId).then((child): Promise<SubagentResult> => {
    disposeChild = () => child.dispose();
    controller.signal.addEventListener('abort', () => child.isDisposed || child.cancel('parent'), { once: true });
    const pending = pendingResultOf(child, events);
    if (pending === undefined)
      throw new Error(`background job ${job.jobId}: its child ${childId} had no turn to resume`);
    return pending.then(toSubagentResult);
  });
  result.catch((error: unknown) => host.report?.(`resuming background job ${job.jobId}: ${errorMessage(error)}`));
  host.jobs.create(owner, { id: childId, result, dispose: () => disposeChild() }, labelOf(label), controller, {
    id: job.jobId,
  });
}

/** The owner's logged job for a one-shot child its log announced as a background job. */
export function loggedJobOf(session: Session, ownerJobs: readonly LoggedJob[]): LoggedJob | undefined {
  const descriptor = subagentDescriptorOf(session.events);
  if (descriptor?.mode !== 'one-shot' || typeof descriptor.callId !== 'string') return undefined;
  const { callId } = descriptor;
  return ownerJobs.find((job) => job.callId === callId);
}

/**
 * A job that needs its owner back: its child has work left (it is resumed), or it finished and its
 * notice was never written (it is delivered).
 */
export function jobNeedsOwner(session: Session, job: LoggedJob, hasWork: (session: Session) => boolean): boolean {
  if (hasWork(session)) return true;
  const ended = endedResultOf(session.events);
  return ended !== undefined && noticeLost(job, ended);
}

/**
 * A finished job's notice is missing because the crash came before it was written. A job stopped
 * (`aborted`) with no notice was stopped with its owner (disposed, or its runtime closed): it had none.
 */
function noticeLost(job: LoggedJob, ended: TurnResult): boolean {
  return !job.noticed && ended.stopReason !== 'aborted';
}

function labelOf(label: unknown): string {
  return typeof label === 'string' ? label : '';
}
